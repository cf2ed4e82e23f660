# Modelled on the Coursera NLP specialization, course 4 (the same student): checking a layer
# against a reference as the assignments' unit tests do: written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("q, k and v projections must be packed")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    w = mha.in_proj_weight.detach().numpy().astype(np.float64)
    d = mha.embed_dim
    return (w[:d].T.copy(), w[d:2 * d].T.copy(), w[2 * d:].T.copy(),
            mha.out_proj.weight.detach().numpy().astype(np.float64).T.copy())


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        expected, expected_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    expected = (expected[0] if mha.batch_first else expected[:, 0]).numpy().astype(np.float64)
    expected_w = expected_w[0].numpy().astype(np.float64)
    actual, actual_w = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(actual - expected)))
    w_diff = float(np.max(np.abs(actual_w - expected_w)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
