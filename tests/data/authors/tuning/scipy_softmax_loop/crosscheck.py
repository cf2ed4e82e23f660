# The same student's adapter (plain torch + NumPy, no scipy): written for this test corpus.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    W = mha.in_proj_weight.detach().numpy().astype(np.float64)
    d = mha.embed_dim
    Wo = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return W[:d].T, W[d : 2 * d].T, W[2 * d :].T, Wo.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_t = (out_t[0] if mha.batch_first else out_t[:, 0]).double().numpy()
    w_t = w_t[0].double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    o = float(np.max(np.abs(out - out_t)))
    a = float(np.max(np.abs(w - w_t)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": o, "weights_max_abs_diff": a, "match": o < tol and a < tol}
