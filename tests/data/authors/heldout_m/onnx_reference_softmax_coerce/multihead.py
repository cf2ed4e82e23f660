# Modelled on onnx/onnx, `onnx/reference/ops/op_softmax.py` (Softmax_1, opset < 13: the input
# coerced to 2-D at `axis`, `N = prod(shape[:axis])`, `D = prod(shape[axis:])`, softmax over D),
# `onnx/reference/ops/op_attention.py` (Attention, opset 23: 3-D inputs reshaped to
# `(batch, seq, num_heads, head_size)` and transposed, `scale = 1 / sqrt(head_size)`) and the
# backend tests' `np.testing.assert_allclose`: written in that style for this test corpus, not
# copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def _coerce_2d(X, axis):
    axis = axis if axis >= 0 else axis + X.ndim
    N = int(np.prod(X.shape[:axis], dtype=np.int64))
    D = int(np.prod(X.shape[axis:], dtype=np.int64))
    return X.reshape(N, D)


def softmax(x, axis=-1):
    X = np.asarray(x)
    x2 = _coerce_2d(X, axis)
    tmp = x2 - x2.max(axis=1, keepdims=True)
    Y = np.exp(tmp)
    Y = Y / Y.sum(axis=1, keepdims=True)
    return Y.reshape(X.shape)


def split_heads(M, num_heads, d_head):
    seq, hidden = M.shape
    if hidden != num_heads * d_head:
        raise ValueError(
            f"hidden size {hidden} is not q_num_heads ({num_heads}) * head_size ({d_head})"
        )
    return np.transpose(M.reshape(seq, num_heads, d_head), (1, 0, 2))


def merge_heads(H):
    num_heads, seq, head_size = H.shape
    return np.transpose(H, (1, 0, 2)).reshape(seq, num_heads * head_size)


def attention(Q, K, V):
    scale = 1.0 / np.sqrt(Q.shape[-1])
    qk = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
    qk_softmax = softmax(qk, axis=-1)
    out = np.matmul(qk_softmax, V)
    return out, qk_softmax


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    hidden = X.shape[-1]
    if hidden % num_heads != 0:
        raise ValueError(f"hidden size {hidden} must be divisible by q_num_heads {num_heads}")
    head_size = hidden // num_heads
    Q = split_heads(np.matmul(X, Wq), num_heads, head_size)
    K = split_heads(np.matmul(X, Wk), num_heads, head_size)
    V = split_heads(np.matmul(X, Wv), num_heads, head_size)
    Y, qk = attention(Q, K, V)
    return np.matmul(merge_heads(Y), Wo), qk


def distinct_head_pairs(weights, atol=1e-6):
    res = []
    H = weights.shape[0]
    for i in range(H):
        for j in range(i + 1, H):
            if not np.allclose(weights[i], weights[j], atol=atol):
                res.append((i, j))
    return res


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    # the initializers of the exported graph: in_proj (3*d, d), out_proj (d, d), and biases
    out = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"num_heads={h} does not divide embed_dim={d_model}")
        n = 3 * d_model * d_model + d_model * d_model
        if bias:
            n += 3 * d_model + d_model
        out[h] = n
    return out
