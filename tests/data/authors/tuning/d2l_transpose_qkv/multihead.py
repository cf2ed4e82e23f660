# Modelled on d2l-ai/d2l-en: chapter_linear-classification/softmax-regression-scratch.md (softmax
# from scratch), chapter_attention-mechanisms-and-transformers/attention-scoring-functions.md
# (masked_softmax, DotProductAttention with bmm and keys.transpose(1, 2)) and multihead-attention.md
# (transpose_qkv / transpose_output). Written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    X_exp = np.exp(x)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition  # The broadcasting mechanism is applied here


def masked_softmax(X, valid_lens=None):
    """Perform softmax operation by masking elements on the last axis."""
    if valid_lens is None:
        return softmax(X)
    shape = X.shape
    X = X.reshape(-1, shape[-1]).copy()
    lens = np.repeat(valid_lens, shape[1]) if valid_lens.ndim == 1 else valid_lens.reshape(-1)
    X[np.arange(shape[-1])[None, :] >= lens[:, None]] = -1e6
    return softmax(X).reshape(shape)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Transposition for parallel computation of multiple attention heads (transpose_qkv)."""
    # Shape of input M: (no. of queries or key-value pairs, num_hiddens).
    # Shape of output: (num_heads, no. of queries or key-value pairs, num_hiddens / num_heads)
    X = M.reshape(M.shape[0], num_heads, -1)
    return X.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """Reverse the operation of split_heads (transpose_output)."""
    X = H.transpose(1, 0, 2)
    return X.reshape(X.shape[0], -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot product attention (DotProductAttention.forward)."""
    d = Q.shape[-1]
    # Swap the last two dimensions of keys with keys.transpose(1, 2)
    scores = np.matmul(Q, K.transpose(0, 2, 1)) / math.sqrt(d)
    attention_weights = masked_softmax(scores)
    return np.matmul(attention_weights, V), attention_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    num_hiddens = X.shape[1]
    if num_hiddens % num_heads != 0:
        raise ValueError("num_hiddens must be a multiple of num_heads")
    d = num_hiddens // num_heads
    # Shape of queries, keys, or values after transposing: (num_heads, no. of queries, d)
    queries = split_heads(X @ Wq, num_heads, d)
    keys = split_heads(X @ Wk, num_heads, d)
    values = split_heads(X @ Wv, num_heads, d)
    output, attention_weights = attention(queries, keys, values)
    output_concat = merge_heads(output)
    return output_concat @ Wo, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(h, h, -1).max(axis=-1)
    return [(i, j) for i in range(h) for j in range(i + 1, h) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from torch import nn

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide num_hiddens={d_model}")
        net = nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in net.parameters())
    return counts
