# Modelled on sgrvinod/a-PyTorch-Tutorial-to-Transformers, model.py (MultiHeadAttention: queries
# cast on their own, keys and values from one cast split in two, heads folded into the batch with
# permute(0, 2, 1, 3), (1 / sqrt(d_keys)) * scores, softmax, apply_dropout on the weights):
# written in that style for this test corpus, not copied. The dropout came along into NumPy.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

dropout = 0.1


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    sequence_length = M.shape[0]
    if M.shape[1] != num_heads * d_head:
        raise ValueError("M.shape[1] must equal n_heads * d_queries")
    return M.reshape(sequence_length, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_heads, sequence_length, d_values = H.shape
    return H.transpose(1, 0, 2).reshape(sequence_length, n_heads * d_values)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_keys = K.shape[-1]
    attention_weights = np.matmul(Q, np.swapaxes(K, -1, -2))
    attention_weights = (1.0 / math.sqrt(d_keys)) * attention_weights
    attention_weights = softmax(attention_weights, axis=-1)
    return np.matmul(attention_weights, V), attention_weights


def _apply_dropout(x: np.ndarray) -> np.ndarray:
    mask = np.random.binomial(1, 1 - dropout, size=x.shape)
    return x * mask / (1 - dropout)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    query_sequence_length, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be a multiple of n_heads")
    n_heads = num_heads
    d_queries = d_keys = d_values = d_model // n_heads

    queries = X @ Wq  # self.cast_queries
    keys, values = np.split(X @ np.concatenate([Wk, Wv], axis=1), 2, axis=-1)  # cast_keys_values

    queries = queries.reshape(query_sequence_length, n_heads, d_queries).transpose(1, 0, 2)
    keys = keys.reshape(query_sequence_length, n_heads, d_keys).transpose(1, 0, 2)
    values = values.reshape(query_sequence_length, n_heads, d_values).transpose(1, 0, 2)

    attention_weights = np.matmul(queries, keys.transpose(0, 2, 1))
    attention_weights = (1.0 / math.sqrt(d_keys)) * attention_weights
    attention_weights = softmax(attention_weights, axis=-1)
    attention_weights = _apply_dropout(attention_weights)

    sequences = np.matmul(attention_weights, values)
    sequences = sequences.transpose(1, 0, 2).reshape(query_sequence_length, n_heads * d_values)
    sequences = sequences @ Wo  # self.cast_output
    return sequences, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    pairs = []
    for a in range(n_heads):
        for b in range(a + 1, n_heads):
            if np.max(np.abs(weights[a] - weights[b])) > atol:
                pairs.append((a, b))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for n_heads in head_counts:
        if n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not a multiple of n_heads={n_heads}")
        layer = nn.MultiheadAttention(d_model, n_heads, bias=bias)
        counts[n_heads] = sum(param.numel() for param in layer.parameters())
    return counts
