# Modelled on the Keras example "Text classification with Transformer"
# (keras.io/examples/nlp/text_classification_with_transformer, its MultiHeadSelfAttention layer:
# projection_dim = embed_dim // num_heads, the ValueError in __init__, attention() with
# tf.matmul(query, key, transpose_b=True) / sqrt(dim_key), separate_heads() reshaping to
# (batch_size, -1, num_heads, projection_dim) with perm [0, 2, 1, 3], Dense layers
# query_dense / key_dense / value_dense / combine_heads with their default bias, and
# model.count_params()): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    exp_x = np.exp(x)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # separate_heads: (seq_len, embed_dim) -> (num_heads, seq_len, projection_dim)
    x = np.reshape(M, (-1, num_heads, d_head))
    return np.transpose(x, (1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # (num_heads, seq_len, projection_dim) -> (seq_len, embed_dim)
    num_heads, _, projection_dim = H.shape
    attention = np.transpose(H, (1, 0, 2))
    return np.reshape(attention, (-1, num_heads * projection_dim))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    score = np.matmul(Q, np.swapaxes(K, -2, -1))
    dim_key = float(K.shape[-1])
    scaled_score = score / np.sqrt(dim_key)
    weights = softmax(scaled_score, axis=-1)
    output = np.matmul(weights, V)
    return output, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    embed_dim = X.shape[-1]
    if embed_dim % num_heads != 0:
        raise ValueError(
            f"embedding dimension = {embed_dim} should be divisible by number of heads = {num_heads}"
        )
    projection_dim = embed_dim // num_heads
    query = X @ Wq  # (seq_len, embed_dim)
    key = X @ Wk  # (seq_len, embed_dim)
    value = X @ Wv  # (seq_len, embed_dim)
    query = split_heads(query, num_heads, projection_dim)  # (num_heads, seq_len, projection_dim)
    key = split_heads(key, num_heads, projection_dim)
    value = split_heads(value, num_heads, projection_dim)
    attention_out, weights = attention(query, key, value)
    concat_attention = merge_heads(attention_out)  # (seq_len, embed_dim)
    output = concat_attention @ Wo  # combine_heads
    return output, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"embedding dimension = {d_model} should be divisible by number of heads = {num_heads}"
            )
        # query_dense, key_dense, value_dense, combine_heads: Dense(embed_dim), kernel + bias each
        dense_params = d_model * d_model + d_model
        counts[num_heads] = 4 * dense_params
    return counts
