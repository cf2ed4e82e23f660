# Modelled on CyberZHG/keras-multi-head (its tests compare a layer's output with a NumPy
# reference and `K.epsilon()` as the tolerance, the weights given to the layer with `set_weights`
# as (input_dim, units) kernels): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention

EPSILON = 1e-7  # K.epsilon()


def weights_from_torch(mha):
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias=True is not supported")
    units = mha.embed_dim
    kernel = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    Wq = kernel[:units].T
    Wk = kernel[units : 2 * units].T
    Wv = kernel[2 * units :].T
    Wo = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64).T
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    weights = weights_from_torch(mha)
    expected, expected_attn = multi_head_attention(X, *weights, mha.num_heads)
    x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = y[0] if mha.batch_first else y[:, 0]
    y = y.numpy().astype(np.float64)
    attn = attn[0].numpy().astype(np.float64)
    out_diff = float(np.max(np.abs(y - expected)))
    attn_diff = float(np.max(np.abs(attn - expected_attn)))
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": bool(out_diff < EPSILON and attn_diff < EPSILON),
    }
