# Modelled on Stanford CS224n assignment 5 (the same student), comparing with torch the way the
# assignment's sanity checks print max differences: written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("no packed in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("has biases")
    C = mha.embed_dim
    w = mha.in_proj_weight
    query, key, value = w[:C], w[C : 2 * C], w[2 * C :]
    proj = mha.out_proj.weight
    return tuple(t.T.numpy().astype(np.float64) for t in (query, key, value, proj))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    y, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).detach().double().numpy()
    att = att[0].detach().double().numpy()
    my_y, my_att = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_y - y).max())
    w_diff = float(np.abs(my_att - att).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
