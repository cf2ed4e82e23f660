# Modelled on onnx/onnx's backend and reference-evaluator tests (`expected = ...`,
# `np.testing.assert_allclose(expected, got)`, `np.allclose` for a yes/no) and on how
# `torch.onnx.export` lays out nn.MultiheadAttention (in_proj split in three, Gemm with
# `transB=1`): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: no fused in_proj_weight")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("in_proj bias or bias_k/bias_v present")
    if mha.out_proj.bias is not None:
        raise ValueError("out_proj bias present")
    E = mha.embed_dim
    W = mha.in_proj_weight.detach().numpy().astype(np.float64)
    # Gemm(transB=1): y = x @ W.T
    Wq, Wk, Wv = W[0:E].T, W[E:2 * E].T, W[2 * E:3 * E].T
    Wo = mha.out_proj.weight.detach().numpy().astype(np.float64).T
    return np.ascontiguousarray(Wq), np.ascontiguousarray(Wk), np.ascontiguousarray(Wv), \
        np.ascontiguousarray(Wo)


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        expected, expected_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    expected = expected.squeeze(0 if mha.batch_first else 1).numpy().astype(np.float64)
    expected_w = expected_w.squeeze(0).numpy().astype(np.float64)
    got, got_w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                      mha.num_heads)
    return {
        "output_max_abs_diff": float(np.abs(expected - got).max()),
        "weights_max_abs_diff": float(np.abs(expected_w - got_w).max()),
        "match": bool(np.allclose(expected, got) and np.allclose(expected_w, got_w)),
    }
