# Modelled on Diego999/pyGAT (train.py and layers.py: parameters reached through `.data`,
# `loss_val.data.item()`, tensors turned into NumPy with `.numpy()` as they are): written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim different from embed_dim is not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    if mha.bias_k is not None:
        raise ValueError("add_bias_kv=True is not supported")
    d = mha.embed_dim
    W = mha.in_proj_weight.data.numpy()
    Wq = W[:d].T.copy()
    Wk = W[d:2 * d].T.copy()
    Wv = W[2 * d:].T.copy()
    Wo = mha.out_proj.weight.data.numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    features = torch.tensor(np.asarray(X)).to(dtype)
    features = features.unsqueeze(0) if mha.batch_first else features.unsqueeze(1)
    with torch.no_grad():
        output, attention = mha(features, features, features, need_weights=True, average_attn_weights=False)
    output = output[0] if mha.batch_first else output[:, 0]
    output = output.data.numpy().astype(np.float64)
    attention = attention[0].data.numpy().astype(np.float64)

    out, att = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(output - out).max())
    att_diff = float(np.abs(attention - att).max())
    if dtype == torch.float32:
        tol = 1e-4 * max(1.0, float(np.abs(output).max()))
        tol_att = 1e-4
    else:
        tol = 1e-8 * max(1.0, float(np.abs(output).max()))
        tol_att = 1e-8
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": att_diff,
        "match": bool(out_diff <= tol and att_diff <= tol_att),
    }
