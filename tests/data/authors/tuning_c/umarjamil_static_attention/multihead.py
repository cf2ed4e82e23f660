# Modelled on hkproj/pytorch-transformer (Umar Jamil), model.py (MultiHeadAttentionBlock with its
# @staticmethod attention: query @ key.transpose(-2, -1) / math.sqrt(d_k), softmax(dim=-1), heads
# by view + transpose(1, 2) and back with transpose + contiguous().view): written in that style
# for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    x = x - x.max(axis=axis, keepdims=True)
    exp_x = np.exp(x)
    return exp_x / exp_x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.ndim != 2 or M.shape[1] != num_heads * d_head:
        raise ValueError("M must have shape (seq_len, h * d_k)")
    # (seq_len, d_model) --> (seq_len, h, d_k) --> (h, seq_len, d_k)
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # (h, seq_len, d_k) --> (seq_len, h, d_k) --> (seq_len, d_model)
    h, seq_len, d_k = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, h * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    # (..., seq_len, d_k) --> (..., seq_len, seq_len)
    attention_scores = (Q @ np.swapaxes(K, -2, -1)) / math.sqrt(d_k)
    attention_scores = softmax(attention_scores, axis=-1)
    return (attention_scores @ V), attention_scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, d_model = X.shape
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError("d_model is not divisible by h")
    h = num_heads
    d_k = d_model // h

    query = X @ Wq  # (seq_len, d_model) --> (seq_len, d_model)
    key = X @ Wk
    value = X @ Wv

    # (seq_len, d_model) --> (seq_len, h, d_k) --> (h, seq_len, d_k)
    query = query.reshape(seq_len, h, d_k).transpose(1, 0, 2)
    key = key.reshape(seq_len, h, d_k).transpose(1, 0, 2)
    value = value.reshape(seq_len, h, d_k).transpose(1, 0, 2)

    x, attention_scores = attention(query, key, value)

    # (h, seq_len, d_k) --> (seq_len, h, d_k) --> (seq_len, d_model)
    x = x.transpose(1, 0, 2).reshape(seq_len, h * d_k)
    return x @ Wo, attention_scores


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    pairs = []
    for i in range(h):
        for j in range(i + 1, h):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError("d_model is not divisible by h")
        block = nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in block.parameters())
    return counts
