# Modelled on hyunwoongko/transformer, models/layers/scale_dot_product_attention.py and
# multi_head_attention.py (ScaleDotProductAttention: batch_size, head, length, d_tensor = k.size(),
# k_t = k.transpose(2, 3), score = (q @ k_t) / math.sqrt(d_tensor); MultiHeadAttention.split with
# view(batch_size, length, n_head, d_tensor).transpose(1, 2) and concat): written in that style for
# this test corpus, not copied. multi_head_attention keeps a batch axis of one.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    length, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError("d_model != n_head * d_tensor")
    return M.reshape(length, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    head, length, d_tensor = H.shape
    return H.transpose(1, 0, 2).reshape(length, head * d_tensor)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # input is 4 dimension tensor [batch_size, head, length, d_tensor]
    batch_size, head, length, d_tensor = K.shape
    k_t = np.swapaxes(K, 2, 3)
    score = (Q @ k_t) / math.sqrt(d_tensor)
    score = softmax(score, axis=-1)
    v = score @ V
    return v, score


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    length, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by n_head")
    d_tensor = d_model // num_heads

    def split(tensor):
        # [batch_size, length, d_model] -> [batch_size, head, length, d_tensor]
        batch_size, length, d_model = tensor.shape
        return tensor.reshape(batch_size, length, num_heads, d_tensor).transpose(0, 2, 1, 3)

    def concat(tensor):
        batch_size, head, length, d_tensor = tensor.shape
        return tensor.transpose(0, 2, 1, 3).reshape(batch_size, length, head * d_tensor)

    x = X[None]  # batch of one
    q, k, v = split(x @ Wq), split(x @ Wk), split(x @ Wv)
    out, attention_ = attention(q, k, v)
    out = concat(out) @ Wo
    return out[0], attention_[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    pairs = []
    for i in range(n_head):
        for j in range(i + 1, n_head):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if n_head <= 0 or d_model % n_head != 0:
            raise ValueError("d_model must be divisible by n_head")
        # w_q, w_k, w_v, w_concat: four d_model x d_model matrices
        counts[n_head] = 4 * d_model * d_model
    return counts
