# Modelled on jadore801120/attention-is-all-you-need-pytorch (the same student): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim differ from embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    d_model = mha.embed_dim
    w = mha.in_proj_weight.detach().cpu().to(torch.float64).numpy()
    w_qs, w_ks, w_vs = (w[i * d_model : (i + 1) * d_model].T.copy() for i in range(3))
    fc = mha.out_proj.weight.detach().cpu().to(torch.float64).numpy().T.copy()
    return w_qs, w_ks, w_vs, fc


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    mha_was_training = mha.training
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    attn = attn[0].to(torch.float64).numpy()
    assert mha.training == mha_was_training

    q, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(q - out)))
    w_diff = float(np.max(np.abs(w - attn)))
    rel = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= rel * max(1.0, float(np.max(np.abs(q)))) and w_diff <= rel
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
