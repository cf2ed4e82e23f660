# Modelled on ml-explore/mlx-examples and mlx.nn.MultiHeadAttention (queries.reshape(B, L,
# num_heads, -1).transpose(0, 2, 1, 3), keys.reshape(B, S, num_heads, -1).transpose(0, 2, 3, 1),
# scale = math.sqrt(1 / queries.shape[-1]), scores = (queries * scale) @ keys,
# mx.softmax(scores.astype(mx.float32), axis=-1).astype(scores.dtype)): written in that style
# for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    x = np.exp(x)
    return x / x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    L, _ = M.shape
    return M.reshape(L, num_heads, -1).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    _, L, _ = H.shape
    return H.transpose(1, 0, 2).reshape(L, -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # keys come in as (heads, S, d) and are laid out (heads, d, S) as mlx does with (0, 2, 3, 1)
    keys = K.transpose(0, 2, 1)
    scale = math.sqrt(1 / Q.shape[-1])
    scores = (Q * scale) @ keys
    scores = softmax(scores.astype(np.float32), axis=-1).astype(scores.dtype)
    return scores @ V, scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    dims = X.shape[-1]
    if dims % num_heads != 0:
        raise ValueError(
            "The input feature dimensions should be divisible by the "
            f"number of heads ({dims} % {num_heads}) != 0"
        )
    queries, keys, values = X[None] @ Wq, X[None] @ Wk, X[None] @ Wv
    B, L, D = queries.shape
    _, S, _ = keys.shape
    queries = queries.reshape(B, L, num_heads, -1).transpose(0, 2, 1, 3)
    keys = keys.reshape(B, S, num_heads, -1).transpose(0, 2, 3, 1)
    values = values.reshape(B, S, num_heads, -1).transpose(0, 2, 1, 3)

    scale = math.sqrt(1 / queries.shape[-1])
    scores = (queries * scale) @ keys
    scores = softmax(scores.astype(np.float32), axis=-1).astype(scores.dtype)
    values_hat = (scores @ values).transpose(0, 2, 1, 3).reshape(B, L, -1)
    return (values_hat @ Wo)[0], scores[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"number of heads ({num_heads}) must divide dims ({d_model})")
        # query_proj, key_proj, value_proj, out_proj: nn.Linear(dims, dims, bias=bias)
        counts[num_heads] = 4 * (d_model * d_model + (d_model if bias else 0))
    return counts
