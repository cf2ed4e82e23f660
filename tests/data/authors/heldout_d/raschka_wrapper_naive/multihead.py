# Modelled on Sebastian Raschka, "Understanding and Coding the Self-Attention Mechanism of Large
# Language Models From Scratch" (omega = query @ keys.T, softmax(omega / d_k ** 0.5), d_k =
# keys.shape[1]) and rasbt/LLMs-from-scratch ch03 (softmax_naive, MultiHeadAttentionWrapper:
# torch.cat([head(x) for head in self.heads], dim=-1), one head module with its own d_out each):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # softmax_naive
    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[1] != num_heads * d_head:
        raise ValueError("M must have num_heads * d_head columns")
    return np.stack([M[:, h * d_head : (h + 1) * d_head] for h in range(num_heads)])


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate([head for head in H], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = K.shape[1]
    omega = Q @ K.T
    attention_weights = softmax(omega / d_k**0.5, axis=-1)
    context_vector = attention_weights @ V
    return context_vector, attention_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_in = X.shape[1]
    if d_in % num_heads != 0:
        raise ValueError(f"d_out must be divisible by num_heads ({num_heads})")
    d_out = d_in // num_heads
    queries, keys, values = X @ Wq, X @ Wk, X @ Wv
    context_vecs, attn_weights = [], []
    for h in range(num_heads):  # MultiHeadAttentionWrapper: one head after the other
        cols = slice(h * d_out, (h + 1) * d_out)
        context_vec, weights = attention(queries[:, cols], keys[:, cols], values[:, cols])
        context_vecs.append(context_vec)
        attn_weights.append(weights)
    return np.concatenate(context_vecs, axis=-1) @ Wo, np.stack(attn_weights)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.abs(weights[i] - weights[j]).max() > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"d_model ({d_model}) is not divisible by num_heads ({num_heads})")
        # each head: W_query, W_key, W_value as Linear(d_in, d_out); then out_proj(d_out, d_out)
        per_head = 3 * (d_model * d_model + (d_model if bias else 0))
        counts[num_heads] = num_heads * per_head + d_model * d_model + (d_model if bias else 0)
    return counts
