# Modelled on huggingface/transformers, models/reformer/modeling_reformer.py (LSHSelfAttention:
# one shared query_key projection and no key projection, key_vectors = _len_and_dim_norm(
# query_key_vectors); _split_hidden_size_dim / _merge_hidden_size_dims; the self mask "tokens
# cannot attend to themselves" with self_mask_value_float32 = -1e5; attention_probs =
# exp(query_key_dots - logsumexp(query_key_dots))): written in that style for this test corpus,
# not copied. The hashing into buckets is left out: every query sees every key.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

SELF_MASK_VALUE_FLOAT32 = -1e5


def _logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    logits = _logsumexp(x, axis=axis)
    return np.exp(x - logits)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # _split_hidden_size_dim
    new_x_shape = M.shape[:-1] + (num_heads, d_head)
    x = M.reshape(new_x_shape)
    return np.swapaxes(x, -3, -2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # _merge_hidden_size_dims
    x = np.swapaxes(H, -3, -2)
    return x.reshape(x.shape[:-2] + (H.shape[-3] * H.shape[-1],))


def _len_norm(x: np.ndarray, epsilon: float = 1e-6) -> np.ndarray:
    variance = np.mean(x**2, axis=-1, keepdims=True)
    return x / np.sqrt(variance + epsilon)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query_key_dots = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(K.shape[-1])

    # Self mask is ALWAYS applied: with shared QK the dot product of a query with itself
    # is almost always the largest, so a token must not attend to itself.
    query_idx = np.arange(Q.shape[-2])
    key_idx = np.arange(K.shape[-2])
    self_mask = query_idx[:, None] != key_idx[None, :]
    query_key_dots = np.where(self_mask, query_key_dots, SELF_MASK_VALUE_FLOAT32)

    attention_probs = softmax(query_key_dots, axis=-1)
    out = np.matmul(attention_probs, V)
    return out, attention_probs


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
    attention_head_size = hidden_size // num_heads

    # LSH attention shares the query and key projection: Wk is not needed
    query_key_vectors = split_heads(X @ Wq, num_heads, attention_head_size)
    value_vectors = split_heads(X @ Wv, num_heads, attention_head_size)
    key_vectors = _len_norm(query_key_vectors)

    out_vectors, attention_probs = attention(query_key_vectors, key_vectors, value_vectors)
    out_vectors = merge_heads(out_vectors)
    return out_vectors @ Wo, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"The hidden size ({d_model}) is not a multiple of the number of attention "
                f"heads ({num_heads})"
            )
        layer = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in layer.parameters())
    return counts
