# Modelled on dmlc/gluon-nlp (the same student), calling the torch module as a gluon cell is called,
# with its defaults: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("query, key and value projections must be packed")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    units = mha.embed_dim
    w = mha.in_proj_weight.detach().double().numpy()
    proj_query, proj_key, proj_value = (w[i * units : (i + 1) * units].T.copy() for i in range(3))
    proj_out = mha.out_proj.weight.detach().double().numpy().T.copy()
    return proj_query, proj_key, proj_value, proj_out


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    data = torch.as_tensor(np.asarray(X), dtype=dtype)
    data = data.unsqueeze(0) if mha.batch_first else data.unsqueeze(1)
    with torch.no_grad():
        out, att_weights = mha(data, data, data)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    att_weights = att_weights[0].double().numpy()
    my_out, my_weights = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_out - out).max())
    w_diff = float(np.abs(my_weights - att_weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.abs(my_out).max())) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
