# Modelled on pbloem/former, former/modules.py (SelfAttention, SelfAttentionWide) and Peter Bloem's
# blog post "Transformers from scratch": written in that style for this test corpus, not copied.
# A student porting it keeps the queries and keys each divided by e ** (1/4) with e the whole
# embedding (narrow heads), the bmm-era axes (transpose(1, 2), softmax over dim 2), and counts the
# parameters the way the wide self-attention has them (a full-width projection per head).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    x = x - x.max(axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / ex.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    t, e = M.shape
    h, s = num_heads, d_head
    if e != h * s:
        raise ValueError(f"Embedding dimension ({e}) should be {h} heads of {s}")
    # - break the embedding into `heads` chunks, heads first
    return M.reshape(t, h, s).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    h, t, s = H.shape
    # swap h, t back, unify heads
    return H.transpose(1, 0, 2).reshape(t, s * h)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # - heads folded into the batch dimension: (b*h, t, s)
    s = Q.shape[-1]
    dot = np.matmul(Q, np.swapaxes(K, 1, 2)) / (s ** (1 / 2))
    dot = softmax(dot, axis=2)
    # - dot now has row-wise self-attention probabilities
    return np.matmul(dot, V), dot


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    t, e = X.shape
    h = num_heads
    if e % h != 0:
        raise ValueError(f"Embedding dimension ({e}) should be divisible by nr. of heads ({h})")
    s = e // h

    keys = split_heads(X @ Wk, h, s)
    queries = split_heads(X @ Wq, h, s)
    values = split_heads(X @ Wv, h, s)

    # - Instead of dividing the dot products by sqrt(e), we scale the keys and queries.
    queries = queries / (e ** (1 / 4))
    keys = keys / (e ** (1 / 4))

    # - get dot product of queries and keys, and scale
    dot = np.matmul(queries, keys.transpose(0, 2, 1))
    assert dot.shape == (h, t, t)
    dot = softmax(dot, axis=2)

    out = np.matmul(dot, values)
    return merge_heads(out) @ Wo, dot


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    pairs = []
    for i in range(h):
        for j in range(i + 1, h):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    e = d_model
    counts = {}
    for h in head_counts:
        if h <= 0 or e % h != 0:
            raise ValueError(f"Embedding dimension ({e}) should be divisible by nr. of heads ({h})")
        # tokeys, toqueries, tovalues: Linear(emb, emb * heads); unifyheads: Linear(heads * emb, emb)
        n = 3 * e * (e * h) + (h * e) * e
        if bias:
            n += 3 * (e * h) + e
        counts[h] = n
    return counts
