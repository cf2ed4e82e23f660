# Modelled on Dao-AILab/flash-attention, tests/test_flash_attn.py (the same student): outputs
# compared after .float(), "Output max diff: (out - out_ref).abs().max().item()": written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: no packed Wqkv")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    Wqkv = mha.in_proj_weight.detach().double()
    Wq, Wk, Wv = Wqkv.chunk(3, dim=0)
    Wo = mha.out_proj.weight.detach().double()
    return tuple(w.t().contiguous().numpy() for w in (Wq, Wk, Wv, Wo))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out_ref, attn_ref = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_ref = out_ref[0] if mha.batch_first else out_ref[:, 0]
    attn_ref = attn_ref[0]

    out, attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                     mha.num_heads)
    out = torch.from_numpy(out).float()
    attn = torch.from_numpy(attn).float()
    output_diff = (out - out_ref.float()).abs().max().item()
    weights_diff = (attn - attn_ref.float()).abs().max().item()
    print(f"Output max diff: {output_diff}")
    print(f"Attention max diff: {weights_diff}")
    tol = 1e-4 if dtype == torch.float32 else 1e-6
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff,
            "match": output_diff <= tol and weights_diff <= tol}
