# Modelled on Simon J.D. Prince, Understanding Deep Learning, notebooks 12.1 "Self Attention"
# and 12.2 "Multihead Self-Attention" (udlbook/udlbook, Notebooks/Chap12: the data X stored as
# D x N with one token per column, softmax_cols normalising each column, K^T Q / sqrt(D_q),
# X' = V @ softmax_cols(...), each head computed on its own and the heads stacked before
# omega_c): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


# In the book every token is a column, so the softmax works on columns (axis 0).
def softmax(x: np.ndarray, axis: int = 0) -> np.ndarray:
    # Exponentiate all of the values (after taking off the max, as the docstring asks)
    exp_values = np.exp(x - np.max(x, axis=axis, keepdims=True))
    # Sum over columns
    denom = np.sum(exp_values, axis=axis, keepdims=True)
    # Compute softmax
    return exp_values / denom


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # One block of features per head, as omega_q1, omega_q2, ... in notebook 12.2
    heads = [M[:, h * d_head:(h + 1) * d_head] for h in range(num_heads)]
    return np.stack(heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # Stack the heads' outputs on top of each other (here: side by side, tokens are rows)
    return np.concatenate([H[h] for h in range(H.shape[0])], axis=1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Go to the book's layout: one column per token
    q = np.swapaxes(Q, -1, -2)  # (..., D_q, N)
    k = np.swapaxes(K, -1, -2)  # (..., D_q, M)
    v = np.swapaxes(V, -1, -2)  # (..., D_v, M)
    D_q = q.shape[-2]
    # Compute dot products K^T Q
    dot = np.swapaxes(k, -1, -2) @ q  # (..., M, N)
    # Scale and apply softmax to each column
    attention_matrix = softmax(dot / np.sqrt(D_q), axis=-2)
    # Weight the values: X' = V @ attention
    x_prime = v @ attention_matrix  # (..., D_v, N)
    return np.swapaxes(x_prime, -1, -2), attention_matrix


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    N, D = X.shape
    if D % num_heads != 0:
        raise ValueError(f"D = {D} cannot be split into {num_heads} heads")
    H_D = D // num_heads
    Q = split_heads(X @ Wq, num_heads, H_D)
    K = split_heads(X @ Wk, num_heads, H_D)
    V = split_heads(X @ Wv, num_heads, H_D)
    X_heads, attention_matrices = attention(Q, K, V)
    X_prime = merge_heads(X_heads) @ Wo
    return X_prime, attention_matrices


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    H = weights.shape[0]
    pairs = []
    for h1 in range(H):
        for h2 in range(h1 + 1, H):
            if np.max(np.abs(weights[h1] - weights[h2])) > atol:
                pairs.append((h1, h2))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    D = d_model
    counts = {}
    for H in head_counts:
        if D % H != 0:
            raise ValueError(f"D = {D} is not divisible by H = {H}")
        H_D = D // H
        # per head: omega_q, omega_k, omega_v (H_D x D) and beta_q, beta_k, beta_v (H_D x 1)
        per_head = 3 * H_D * D + (3 * H_D if bias else 0)
        # omega_c (D x D), and its bias
        counts[H] = H * per_head + D * D + (D if bias else 0)
    return counts
