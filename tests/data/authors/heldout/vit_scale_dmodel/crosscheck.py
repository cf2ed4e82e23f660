# Modelled on the same ViT code's use of torch Linear layers (weights stored (out, in), applied as
# x @ W.T): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    "Return (Wq, Wk, Wv, Wo) as float64 arrays used as x @ W."
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv=True is not supported")
    in_proj = mha.in_proj_weight.detach().to(torch.float64)
    linears = list(in_proj.chunk(3, dim=0)) + [mha.out_proj.weight.detach().to(torch.float64)]
    return tuple(lin.T.contiguous().numpy() for lin in linears)


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(X, dtype=dtype)
    nbatches_axis = 0 if mha.batch_first else 1
    x = x.unsqueeze(nbatches_axis)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out.squeeze(nbatches_axis).to(torch.float64).numpy()
    attn = attn.squeeze(0).to(torch.float64).numpy()
    my_out, my_attn = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(my_out - out)))
    w_diff = float(np.max(np.abs(my_attn - attn)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, float(np.max(np.abs(out))))
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff <= tol * scale and w_diff <= tol)}
