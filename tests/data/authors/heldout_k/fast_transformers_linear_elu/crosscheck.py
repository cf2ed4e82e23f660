# Modelled on idiap/fast-transformers' weight_mapper.py (PytorchMapper: renaming and reshaping a
# torch.nn.TransformerEncoderLayer's `in_proj_weight` into query/key/value projections with
# `.chunk(3)`) and its tests (`self.assertLess(torch.abs(v - v_hat).max(), tol)`): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("query/key/value projections of different sizes are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only modules without biases are supported")
    query_projection, key_projection, value_projection = mha.in_proj_weight.detach().chunk(3, dim=0)
    out_projection = mha.out_proj.weight.detach()
    return tuple(
        w.t().to(torch.float64).numpy().copy()
        for w in (query_projection, key_projection, value_projection, out_projection)
    )


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    if mha.batch_first:
        x = x[None]  # (N, L, D)
    else:
        x = x[:, None]  # (L, N, D)
    with torch.no_grad():
        v_hat, a_hat = mha(x, x, x, need_weights=True, average_attn_weights=False)
    v_hat = (v_hat[0] if mha.batch_first else v_hat[:, 0]).double().numpy()
    a_hat = a_hat[0].double().numpy()

    v, a = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    v_err = float(np.abs(v - v_hat).max())
    a_err = float(np.abs(a - a_hat).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    scale = max(1.0, float(np.abs(v_hat).max()))
    return {"output_max_abs_diff": v_err, "weights_max_abs_diff": a_err,
            "match": bool(v_err <= tol * scale and a_err <= tol)}
