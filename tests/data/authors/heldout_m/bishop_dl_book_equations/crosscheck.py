# Modelled on Bishop & Bishop, "Deep Learning: Foundations and Concepts" (2024), chapter 12, and
# the book's convention that a linear layer maps a row vector x to x W (so that PyTorch's
# `Linear` weight, stored as W^T, is transposed back): written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("the keys and values must have the same dimensionality D as the queries")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("this comparison is for the model without bias parameters")
    D = mha.embed_dim
    W_in = mha.in_proj_weight.detach().to(torch.float64).numpy()
    W_q = W_in[0:D, :].T
    W_k = W_in[D:2 * D, :].T
    W_v = W_in[2 * D:3 * D, :].T
    W_o = mha.out_proj.weight.detach().to(torch.float64).numpy().T
    return np.array(W_q), np.array(W_k), np.array(W_v), np.array(W_o)


def cross_check(mha, X):
    X = np.asarray(X)
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    if mha.batch_first:
        x = x.reshape(1, *x.shape)
    else:
        x = x.reshape(x.shape[0], 1, x.shape[1])
    with torch.no_grad():
        Y_torch, A_torch = mha(x, x, x, need_weights=True, average_attn_weights=False)
    Y_torch = Y_torch.reshape(X.shape).to(torch.float64).numpy()
    A_torch = A_torch[0].to(torch.float64).numpy()
    Y, A = multi_head_attention(X.astype(np.float64), *weights_from_torch(mha), mha.num_heads)
    dY = float(np.max(np.abs(Y - Y_torch)))
    dA = float(np.max(np.abs(A - A_torch)))
    scale = max(1.0, float(np.max(np.abs(Y_torch))))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": dY, "weights_max_abs_diff": dA,
            "match": bool(dY <= tol * scale and dA <= tol)}
