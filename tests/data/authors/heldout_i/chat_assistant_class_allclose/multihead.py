# Modelled on chat-assistant answers to "implement multi-head attention from scratch in NumPy
# as a class" (a `MultiHeadAttention` class with `assert d_model % num_heads == 0`,
# `split_heads`/`combine_heads` methods and `scaled_dot_product_attention(Q, K, V, mask=None)`,
# "### Step 1" comments, `np.allclose` to compare heads, weights read with `.data.numpy()`,
# and `attn_output, attn_weights = mha(x, x, x)` to verify against PyTorch): written in that
# style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax."""
    e_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


class MultiHeadAttention:
    """Multi-head attention, NumPy only."""

    def __init__(self, d_model: int, num_heads: int):
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

    def split_heads(self, x: np.ndarray) -> np.ndarray:
        # (seq_len, d_model) -> (num_heads, seq_len, d_k)
        seq_len = x.shape[0]
        x = x.reshape(seq_len, self.num_heads, self.d_k)
        return x.transpose(1, 0, 2)

    def combine_heads(self, x: np.ndarray) -> np.ndarray:
        # (num_heads, seq_len, d_k) -> (seq_len, d_model)
        num_heads, seq_len, d_k = x.shape
        return x.transpose(1, 0, 2).reshape(seq_len, num_heads * d_k)

    @staticmethod
    def scaled_dot_product_attention(Q, K, V, mask=None):
        d_k = Q.shape[-1]
        scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
        if mask is not None:
            scores = np.where(mask == 0, -1e9, scores)
        attention_weights = softmax(scores, axis=-1)
        output = np.matmul(attention_weights, V)
        return output, attention_weights

    def __call__(self, X, W_q, W_k, W_v, W_o):
        # Step 1: linear projections
        Q = X @ W_q
        K = X @ W_k
        V = X @ W_v
        # Step 2: split into heads
        Q, K, V = self.split_heads(Q), self.split_heads(K), self.split_heads(V)
        # Step 3: scaled dot-product attention per head
        attn_output, attn_weights = self.scaled_dot_product_attention(Q, K, V)
        # Step 4: concatenate heads and final projection
        output = self.combine_heads(attn_output) @ W_o
        return output, attn_weights


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"last dimension {M.shape[-1]} != num_heads * d_head = {num_heads * d_head}")
    return MultiHeadAttention(num_heads * d_head, num_heads).split_heads(M)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, _, d_head = H.shape
    return MultiHeadAttention(num_heads * d_head, num_heads).combine_heads(H)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return MultiHeadAttention.scaled_dot_product_attention(Q, K, V)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    mha = MultiHeadAttention(X.shape[-1], num_heads)
    return mha(X, Wq, Wk, Wv, Wo)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    distinct = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if not np.allclose(weights[i], weights[j], atol=atol):
                distinct.append((i, j))
    return distinct


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"num_heads={h} does not divide d_model={d_model}")
        mha = nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in mha.parameters())
    return counts
