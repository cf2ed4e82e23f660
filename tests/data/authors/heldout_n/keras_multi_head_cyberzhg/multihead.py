# Modelled on CyberZHG/keras-multi-head (keras_multi_head/multi_head_attention.py: MultiHeadAttention
# with `activation='relu'`, `use_bias=True`, `_reshape_to_batches` / `_reshape_from_batches`,
# `K.dot(q, self.Wq)` then `self.activation(q)`, and the output `y = K.dot(y, self.Wo)` passed
# through the same activation) and keras-self-attention's ScaledDotProductAttention
# (`K.batch_dot(query, key, axes=2) / K.sqrt(feature_dim)`, `K.exp(e - K.max(e, ...))`,
# `e / (K.sum(e, ...) + K.epsilon())`): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

EPSILON = 1e-7  # K.epsilon()


def relu(x):
    return np.maximum(x, 0.0)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / (np.sum(e, axis=axis, keepdims=True) + EPSILON)


def _reshape_to_batches(x, head_num):
    batch_size, seq_len, feature_dim = x.shape
    head_dim = feature_dim // head_num
    x = np.reshape(x, (batch_size, seq_len, head_num, head_dim))
    x = np.transpose(x, [0, 2, 1, 3])
    return np.reshape(x, (batch_size * head_num, seq_len, head_dim))


def _reshape_from_batches(x, head_num):
    input_shape = x.shape
    batch_size, seq_len, feature_dim = input_shape[0], input_shape[1], input_shape[2]
    x = np.reshape(x, (batch_size // head_num, head_num, seq_len, feature_dim))
    x = np.transpose(x, [0, 2, 1, 3])
    return np.reshape(x, (batch_size // head_num, seq_len, feature_dim * head_num))


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            "Invalid feature dim %d for head_num %d" % (M.shape[-1], num_heads)
        )
    return _reshape_to_batches(M[np.newaxis], num_heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return _reshape_from_batches(H, H.shape[0])[0]


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # batch_dot works on (batch, len, dim): fold every leading axis into one batch axis
    lead = Q.shape[:-2]
    query = Q.reshape((-1,) + Q.shape[-2:])
    key = K.reshape((-1,) + K.shape[-2:])
    value = V.reshape((-1,) + V.shape[-2:])
    feature_dim = query.shape[-1]
    e = np.einsum("bik,bjk->bij", query, key) / np.sqrt(float(feature_dim))
    a = softmax(e, axis=-1)
    v = np.einsum("bij,bjk->bik", a, value)
    return v.reshape(lead + v.shape[-2:]), a.reshape(lead + a.shape[-2:])


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
    activation=relu,
) -> tuple[np.ndarray, np.ndarray]:
    feature_dim = X.shape[-1]
    if feature_dim % num_heads != 0:
        raise ValueError(
            "Invalid head number %d with the given input dim %d" % (num_heads, feature_dim)
        )
    head_dim = feature_dim // num_heads
    q, k, v = np.dot(X, Wq), np.dot(X, Wk), np.dot(X, Wv)
    if activation is not None:
        q = activation(q)
        k = activation(k)
        v = activation(v)
    y, a = attention(
        split_heads(q, num_heads, head_dim),
        split_heads(k, num_heads, head_dim),
        split_heads(v, num_heads, head_dim),
    )
    y = merge_heads(y)
    y = np.dot(y, Wo)
    if activation is not None:
        y = activation(y)
    return y, a


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    head_num = weights.shape[0]
    pairs = []
    for i in range(head_num):
        for j in range(i + 1, head_num):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for head_num in head_counts:
        if d_model % head_num != 0:
            raise ValueError(
                "Invalid head number %d with the given input dim %d" % (head_num, d_model)
            )
        # Wq, Wk, Wv, Wo and, with use_bias, bq, bk, bv, bo
        counts[head_num] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts
