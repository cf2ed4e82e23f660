# Modelled on pbloem/former (the same student): written in that style for this test corpus, not
# copied. The adapter is the student's own, checked against torch as the post suggests.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    e = mha.embed_dim
    w = mha.in_proj_weight.detach().double().numpy()
    toqueries, tokeys, tovalues = w[:e], w[e : 2 * e], w[2 * e :]
    unifyheads = mha.out_proj.weight.detach().double().numpy()
    # nn.Linear computes x @ W.T
    return toqueries.T, tokeys.T, tovalues.T, unifyheads.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dt = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dt)
    x = x[None, :, :] if mha.batch_first else x[:, None, :]
    with torch.no_grad():
        y, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    att = att[0].double().numpy()
    mine, mine_att = multi_head_attention(np.asarray(X, float), *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.abs(mine - y).max())
    d_att = float(np.abs(mine_att - att).max())
    tol = 1e-4 if dt == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": d_out,
        "weights_max_abs_diff": d_att,
        "match": bool(d_out <= tol * max(1.0, float(np.abs(y).max())) and d_att <= tol),
    }
