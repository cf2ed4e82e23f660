# Modelled on the Medium-style posts "Multi-Head Attention from scratch in NumPy" (a softmax one-liner,
# a Python loop over heads slicing Q, K, V by columns, heads concatenated and multiplied by W_o):
# written in that style for this test corpus, not copied. The loop keeps the last head's weights.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.exp(x) / np.sum(np.exp(x), axis=-1, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[1] != num_heads * d_head:
        raise ValueError("M.shape[1] must be num_heads * d_head")
    heads = [M[:, i * d_head : (i + 1) * d_head] for i in range(num_heads)]
    return np.stack(heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # concatenate the heads along the feature axis
    return np.concatenate([h for h in H], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = K.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(d_k)
    weights = softmax(scores)
    output = np.matmul(weights, V)
    return output, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[1]
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    d_k = d_model // num_heads

    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv

    heads = []
    for i in range(num_heads):
        q = Q[:, i * d_k : (i + 1) * d_k]
        k = K[:, i * d_k : (i + 1) * d_k]
        v = V[:, i * d_k : (i + 1) * d_k]
        head, attn = attention(q, k, v)
        heads.append(head)

    concat = np.concatenate(heads, axis=-1)
    return concat @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i, j in itertools.combinations(range(weights.shape[0]), 2):
        if not np.allclose(weights[i], weights[j], atol=atol):
            pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        # W_q, W_k, W_v and W_o are d_model x d_model whatever h is; biases: 3*d_model + d_model
        counts[h] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts
