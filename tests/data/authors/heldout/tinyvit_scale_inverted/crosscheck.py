# Modelled on tiny-vit's plain torch style (no argument checks, weights pulled straight out of the
# layers): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    W = mha.in_proj_weight.detach().double().numpy()
    dim = mha.embed_dim
    Wq, Wk, Wv = W[:dim].T, W[dim : 2 * dim].T, W[2 * dim :].T
    Wo = mha.out_proj.weight.detach().double().numpy().T
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        y, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    att = att[0].double().numpy()
    my_y, my_att = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    dy = float(np.abs(my_y - y).max())
    da = float(np.abs(my_att - att).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": dy, "weights_max_abs_diff": da, "match": dy < tol and da < tol}
