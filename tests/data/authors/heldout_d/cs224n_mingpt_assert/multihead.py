# Modelled on Stanford CS224n, assignment 5 (2023/2024) "minGPT variant", src/attention.py
# (CausalSelfAttention: assert config.n_embd % config.n_head == 0, k.view(B, T, n_head,
# C // n_head).transpose(1, 2), att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1))),
# y.transpose(1, 2).contiguous().view(B, T, C)), the causal mask dropped for this module's
# self-attention: written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = x.max(axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    T, C = M.shape
    if C != num_heads * d_head:
        raise ValueError(f"{C} != {num_heads} * {d_head}")
    return M.reshape(T, num_heads, d_head).swapaxes(0, 1)  # (nh, T, hs)


def merge_heads(H: np.ndarray) -> np.ndarray:
    nh, T, hs = H.shape
    return H.swapaxes(0, 1).reshape(T, nh * hs)  # re-assemble all head outputs side by side


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    att = (Q @ np.swapaxes(K, -2, -1)) * (1.0 / math.sqrt(K.shape[-1]))
    att = softmax(att, axis=-1)
    return att @ V, att


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    T, C = X.shape
    assert C % num_heads == 0
    hs = C // num_heads
    k = split_heads(X @ Wk, num_heads, hs)
    q = split_heads(X @ Wq, num_heads, hs)
    v = split_heads(X @ Wv, num_heads, hs)
    y, att = attention(q, k, v)
    y = merge_heads(y)
    return y @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nh = weights.shape[0]
    return [(i, j) for i in range(nh) for j in range(i + 1, nh)
            if np.abs(weights[i] - weights[j]).max() > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"n_head={n_head} must divide n_embd={d_model}")
        # key, query, value, proj: nn.Linear(n_embd, n_embd)
        counts[n_head] = 4 * (d_model * d_model + (d_model if bias else 0))
    return counts
