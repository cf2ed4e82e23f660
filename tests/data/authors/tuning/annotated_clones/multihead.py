# Modelled on harvardnlp/annotated-transformer, the_annotated_transformer.py (attention(query, key,
# value, mask=None, dropout=None) and MultiHeadedAttention with clones of linears, view and
# transpose(1, 2)): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    "Numerically stable softmax along `axis`."
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    "view(nbatches, -1, h, d_k).transpose(1, 2), without the batch axis."
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"last axis is {M.shape[-1]}, expected h * d_k = {num_heads * d_head}")
    return M.reshape(M.shape[0], num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    "transpose(1, 2).contiguous().view(nbatches, -1, h * d_k), without the batch axis."
    h, n, d_k = H.shape
    return np.ascontiguousarray(H.swapaxes(0, 1)).reshape(n, h * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    "Compute 'Scaled Dot Product Attention'"
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / math.sqrt(d_k)
    p_attn = softmax(scores, axis=-1)
    return np.matmul(p_attn, V), p_attn


def clones(W, N):
    "Produce N identical layers."
    return [copy.deepcopy(W) for _ in range(N)]


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    "Implements Figure 2"
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not a multiple of h={num_heads}")
    d_k = d_model // num_heads
    linears = [Wq, Wk, Wv, Wo]
    # 1) Do all the linear projections in batch from d_model => h x d_k
    query, key, value = [
        split_heads(x @ lin, num_heads, d_k) for lin, x in zip(linears, (X, X, X))
    ]
    # 2) Apply attention on all the projected vectors in batch.
    x, attn = attention(query, key, value)
    # 3) "Concat" using a view and apply a final linear.
    x = merge_heads(x)
    return x @ linears[-1], attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if np.any(np.abs(weights[i] - weights[j]) > atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"h={h} does not divide d_model={d_model}")
        model = nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in model.parameters())
    return counts
