# Modelled on ml-explore/mlx-examples (the same student), porting torch weights as the examples'
# convert.py scripts do (weights kept as (out, in), applied as x @ w.T): written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate query/key/value projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    weights = {k: v.detach().to(torch.float64).numpy() for k, v in mha.state_dict().items()}
    query_proj, key_proj, value_proj = np.split(weights["in_proj_weight"], 3, axis=0)
    out_proj = weights["out_proj.weight"]
    return query_proj.T, key_proj.T, value_proj.T, out_proj.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(X, dtype=dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    w = w[0].to(torch.float64).numpy()
    mine, mine_w = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.max(np.abs(mine - out)))
    d_w = float(np.max(np.abs(mine_w - w)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out <= tol and d_w <= tol}
