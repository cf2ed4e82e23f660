# Modelled on Kaggle notebooks "Transformer from scratch with NumPy" (the same student), checked
# with torch.tensor(x, dtype=torch.float32) as those notebooks feed torch: written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("in_proj_weight is None")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias not supported")
    d_model = mha.embed_dim
    W = mha.in_proj_weight.detach().numpy().astype(np.float64)
    Wq = W[:d_model].T
    Wk = W[d_model : 2 * d_model].T
    Wv = W[2 * d_model :].T
    Wo = mha.out_proj.weight.detach().numpy().astype(np.float64).T
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=torch.float32)
    if mha.batch_first:
        x = x.unsqueeze(0)
    else:
        x = x.unsqueeze(1)
    with torch.no_grad():
        out_t, attn_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    if mha.batch_first:
        out_t = out_t[0]
    else:
        out_t = out_t[:, 0]
    out_t = out_t.numpy().astype(np.float64)
    attn_t = attn_t[0].numpy().astype(np.float64)
    out, attn = multi_head_attention(X.astype(np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(out - out_t).max())
    attn_diff = float(np.abs(attn - attn_t).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.abs(out_t).max())) and attn_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff, "match": bool(match)}
