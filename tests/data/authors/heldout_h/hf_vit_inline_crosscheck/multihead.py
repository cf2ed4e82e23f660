# Modelled on huggingface/transformers, models/vit/modeling_vit.py (ViTSelfAttention:
# attention_head_size = int(hidden_size / num_attention_heads), transpose_for_scores with
# x.size()[:-1] + (num_attention_heads, attention_head_size) and permute(0, 2, 1, 3),
# attention_scores / math.sqrt(attention_head_size), context_layer.permute(0, 2, 1, 3) and
# new_context_layer_shape = size()[:-2] + (all_head_size,); query/key/value Linear with
# bias=config.qkv_bias, ViTSelfOutput.dense always with a bias): written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x - x_max)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def transpose_for_scores(x: np.ndarray, num_attention_heads: int,
                         attention_head_size: int) -> np.ndarray:
    new_x_shape = x.shape[:-1] + (num_attention_heads, attention_head_size)
    x = x.reshape(new_x_shape)
    return x.transpose(1, 0, 2)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    return transpose_for_scores(M, num_heads, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
    context_layer = H.transpose(1, 0, 2)
    new_context_layer_shape = context_layer.shape[:-2] + (H.shape[0] * H.shape[2],)
    return context_layer.reshape(new_context_layer_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    attention_head_size = Q.shape[-1]
    # Take the dot product between "query" and "key" to get the raw attention scores.
    attention_scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    attention_scores = attention_scores / math.sqrt(attention_head_size)
    # Normalize the attention scores to probabilities.
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = np.matmul(attention_probs, V)
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
            f"The hidden size {hidden_size,} is not a multiple of the number of attention "
            f"heads {num_heads}."
        )
    attention_head_size = int(hidden_size / num_heads)

    query_layer = split_heads(X @ Wq, num_heads, attention_head_size)
    key_layer = split_heads(X @ Wk, num_heads, attention_head_size)
    value_layer = split_heads(X @ Wv, num_heads, attention_head_size)

    context_layer, attention_probs = attention(query_layer, key_layer, value_layer)
    context_layer = merge_heads(context_layer)
    # ViTSelfOutput.dense
    return context_layer @ Wo, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.max(np.abs(weights[i] - weights[j])) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_attention_heads in head_counts:
        if d_model % num_attention_heads != 0:
            raise ValueError(
                f"The hidden size {d_model} is not a multiple of the number of attention "
                f"heads {num_attention_heads}."
            )
        # query, key, value: nn.Linear(hidden_size, all_head_size, bias=config.qkv_bias)
        n = 3 * (d_model * d_model + (d_model if bias else 0))
        # ViTSelfOutput.dense: nn.Linear(hidden_size, hidden_size)
        n += d_model * d_model + d_model
        counts[num_attention_heads] = n
    return counts
