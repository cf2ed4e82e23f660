# Modelled on tensorflow/tensor2tensor (the same student), comparing with torch by reading the
# weights as stored: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("only a packed in_proj_weight is supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    w = mha.in_proj_weight.detach().numpy()
    wq, wk, wv = np.split(w, 3, axis=0)
    wo = mha.out_proj.weight.detach().numpy()
    return wq.T, wk.T, wv.T, wo.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    inputs = torch.as_tensor(X, dtype=dtype)
    inputs = inputs[None] if mha.batch_first else inputs[:, None]
    with torch.no_grad():
        y, w = mha(inputs, inputs, inputs, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    w = w[0].double().numpy()
    x, weights = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(x - y)))
    w_diff = float(np.max(np.abs(weights - w)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": w_diff,
        "match": bool(out_diff <= tol * max(1.0, float(np.max(np.abs(x)))) and w_diff <= tol),
    }
