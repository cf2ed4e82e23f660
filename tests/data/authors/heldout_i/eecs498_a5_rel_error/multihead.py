# Modelled on UMich EECS 498-007/598-005 (Justin Johnson), assignment 5 `transformers.py`
# (scaled_dot_product_no_loop_batch: `_, _, M = query.shape`, torch.bmm(query,
# key.permute(0, 2, 1)) / math.sqrt(M); SelfAttention(dim_in, dim_q, dim_v) as one head;
# MultiHeadAttention(num_heads, dim_in, dim_out) as a ModuleList of SelfAttention(dim_in,
# dim_out, dim_out) heads concatenated into nn.Linear(num_heads * dim_out, dim_in); the
# notebook's rel_error helper): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def rel_error(x, y, eps=1e-10):
    """Relative error between x and y, as in the assignment's notebooks."""
    top = np.max(np.abs(x - y))
    bot = np.max(np.maximum(np.abs(x) + np.abs(y), eps))
    return top / bot


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    K, D = M.shape
    if D != num_heads * d_head:
        raise ValueError(f"expected {num_heads} * {d_head} features, got {D}")
    return M.reshape(K, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, K, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(K, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # scaled_dot_product_no_loop_batch(query, key, value): (N, K, M) inputs
    query, key, value = Q, K, V
    _, _, M = query.shape
    E = np.matmul(query, key.transpose(0, 2, 1)) / math.sqrt(M)
    weights_softmax = softmax(E, axis=-1)
    y = np.matmul(weights_softmax, value)
    return y, weights_softmax


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    dim_in = X.shape[1]
    dim_out = dim_in // num_heads
    ys, ws = [], []
    for i in range(num_heads):
        # SelfAttention(dim_in, dim_out, dim_out): the i-th head's own q, k, v
        cols = slice(i * dim_out, (i + 1) * dim_out)
        q = X @ Wq[:, cols]
        k = X @ Wk[:, cols]
        v = X @ Wv[:, cols]
        y, w = attention(q[None], k[None], v[None])
        ys.append(y[0])
        ws.append(w[0])
    y = np.concatenate(ys, axis=-1)
    return y @ Wo, np.stack(ws)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if rel_error(weights[i], weights[j]) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    def linear(d_in, d_out):
        return d_in * d_out + (d_out if bias else 0)

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        dim_in = dim_out = d_model
        # MultiHeadAttention(num_heads, dim_in, dim_out)
        heads = num_heads * (linear(dim_in, dim_out) * 3)  # SelfAttention(dim_in, dim_out, dim_out)
        counts[num_heads] = heads + linear(num_heads * dim_out, dim_in)
    return counts
