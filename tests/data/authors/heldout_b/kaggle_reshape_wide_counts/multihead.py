# Modelled on Kaggle notebooks "Transformer from scratch with NumPy" (projections, then
# Q.reshape(num_heads, seq_len, d_k) to "split into heads" and out.reshape(seq_len, d_model) to
# concatenate; a parameter count where every head owns its W_q, W_k, W_v): written in that style
# for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len = M.shape[0]
    if M.shape[1] != num_heads * d_head:
        raise ValueError("wrong number of features")
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, d_k = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / np.sqrt(d_k)
    attn = softmax(scores, axis=-1)
    return np.matmul(attn, V), attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model % num_heads != 0")
    d_k = d_model // num_heads

    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv

    # split into heads
    Q = Q.reshape(num_heads, seq_len, d_k)
    K = K.reshape(num_heads, seq_len, d_k)
    V = V.reshape(num_heads, seq_len, d_k)

    out, attn = attention(Q, K, V)

    # concatenate heads
    out = out.reshape(seq_len, d_model)
    return out @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for num_heads in head_counts:
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        # every head has its own W_q, W_k, W_v (d_model x d_model); one W_o
        per_head = 3 * d_model * d_model + (3 * d_model if bias else 0)
        result[num_heads] = num_heads * per_head + d_model * d_model + (d_model if bias else 0)
    return result
