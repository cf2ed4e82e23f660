# Modelled on mindspore-ai/mindspore (inputs always wrapped as `Tensor(x, mstype.float32)`,
# `Dense` weights stored as (out_channels, in_channels) and applied with `transpose_b=True`,
# the tests' `np.allclose(..., 0.001, 0.001)`): written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("has_bias=True is not supported")
    hidden_size = mha.embed_dim
    weight = mha.in_proj_weight.detach().numpy().astype(np.float64)
    dense1 = weight[0:hidden_size]
    dense2 = weight[hidden_size:2 * hidden_size]
    dense3 = weight[2 * hidden_size:3 * hidden_size]
    projection = mha.out_proj.weight.detach().numpy().astype(np.float64)
    # Dense keeps (out, in) and multiplies with transpose_b=True; our pipeline wants (in, out)
    return (np.transpose(dense1), np.transpose(dense2), np.transpose(dense3),
            np.transpose(projection))


def cross_check(mha, X):
    x = torch.tensor(X).float()  # Tensor(x, mstype.float32)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        output, probs = mha(x, x, x, need_weights=True, average_attn_weights=False)
    output = (output[0] if mha.batch_first else output[:, 0]).double().numpy()
    probs = probs[0].double().numpy()
    expect, expect_probs = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(output - expect)))
    probs_diff = float(np.max(np.abs(probs - expect_probs)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": probs_diff,
        "match": bool(out_diff < tol and probs_diff < tol),
    }
