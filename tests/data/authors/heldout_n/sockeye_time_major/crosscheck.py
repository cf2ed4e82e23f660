# Modelled on awslabs/sockeye (time-major inputs everywhere: `(length, batch, depth)`, the tests'
# `torch.testing.assert_close` defaults per dtype): written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("projections with bias are not supported")
    depth = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    w_q, w_k, w_v = w[:depth], w[depth:2 * depth], w[2 * depth:]
    w_o = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return w_q.T, w_k.T, w_v.T, w_o.T


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    inputs = torch.from_numpy(np.asarray(X)).to(dtype).unsqueeze(1)  # (length, batch=1, depth)
    with torch.no_grad():
        outputs, probs = mha(inputs, inputs, inputs, need_weights=True, average_attn_weights=False)
    outputs = outputs[:, 0].to(torch.float64).numpy()
    probs = probs[0].to(torch.float64).numpy()
    ours, our_probs = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(outputs - ours)))
    prob_diff = float(np.max(np.abs(probs - our_probs)))
    atol = 1e-5 if dtype == torch.float32 else 1e-7
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": prob_diff,
        "match": out_diff <= atol and prob_diff <= atol,
    }
