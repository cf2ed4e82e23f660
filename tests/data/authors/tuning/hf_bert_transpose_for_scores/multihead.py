# Modelled on huggingface/transformers, src/transformers/models/bert/modeling_bert.py
# (BertSelfAttention: the hidden-size check, transpose_for_scores with new_x_shape and
# permute(0, 2, 1, 3), attention_scores / math.sqrt(attention_head_size), context_layer reshaped
# to all_head_size): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    return x / x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """transpose_for_scores: (seq, all_head_size) -> (heads, seq, head_size)."""
    new_x_shape = M.shape[:-1] + (num_heads, d_head)
    x = M.reshape(new_x_shape)  # numpy raises ValueError when the sizes do not fit
    return np.swapaxes(x, -3, -2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    context_layer = np.swapaxes(H, -3, -2)
    new_context_layer_shape = context_layer.shape[:-2] + (H.shape[-3] * H.shape[-1],)
    return context_layer.reshape(new_context_layer_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    attention_head_size = Q.shape[-1]
    # Take the dot product between "query" and "key" to get the raw attention scores.
    attention_scores = Q @ np.swapaxes(K, -1, -2)
    attention_scores = attention_scores / math.sqrt(attention_head_size)
    # Normalize the attention scores to probabilities.
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = attention_probs @ V
    return context_layer, attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    hidden_size = X.shape[-1]
    if hidden_size % num_heads != 0:
        raise ValueError(
            f"The hidden size ({hidden_size}) is not a multiple of the number of attention "
            f"heads ({num_heads})"
        )
    attention_head_size = int(hidden_size / num_heads)
    query_layer = split_heads(X @ Wq, num_heads, attention_head_size)
    key_layer = split_heads(X @ Wk, num_heads, attention_head_size)
    value_layer = split_heads(X @ Wv, num_heads, attention_head_size)
    context_layer, attention_probs = attention(query_layer, key_layer, value_layer)
    context_layer = merge_heads(context_layer)
    return context_layer @ Wo, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = weights.shape[0]
    result = []
    for i in range(n):
        for j in range(i + 1, n):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"The hidden size ({d_model}) is not a multiple of the number of attention "
                f"heads ({num_heads})"
            )
    return {
        num_heads: sum(
            p.numel() for p in torch.nn.MultiheadAttention(d_model, num_heads, bias=bias).parameters()
        )
        for num_heads in head_counts
    }
