# Modelled on the Stack Overflow answer "How to implement the Softmax function in Python"
# (e_x = np.exp(x - np.max(x)) / e_x.sum(...)) as chat assistants repeat it inside a NumPy
# multi-head attention (np.split into heads, np.stack, a "verify against PyTorch" snippet that
# recomputes the attention inline): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Compute softmax values for each set of scores in x."""
    e_x = np.exp(x - np.max(x))
    return e_x / e_x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"Expected last dim {num_heads * d_head}, got {M.shape[-1]}")
    return np.stack(np.split(M, num_heads, axis=-1), axis=0)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate(list(H), axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    d_head = d_model // num_heads
    Q = split_heads(X @ Wq, num_heads, d_head)
    K = split_heads(X @ Wk, num_heads, d_head)
    V = split_heads(X @ Wv, num_heads, d_head)
    heads, weights = attention(Q, K, V)
    return merge_heads(heads) @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    result = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"num_heads={h} must divide d_model={d_model}")
        # Q, K, V, O projections: 4 * d_model^2 weights (+ 4 * d_model biases)
        counts[h] = 4 * d_model**2 + (4 * d_model if bias else 0)
    return counts
