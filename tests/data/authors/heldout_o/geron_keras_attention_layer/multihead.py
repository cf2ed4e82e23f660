# Modelled on Aurélien Géron, Hands-On Machine Learning with Scikit-Learn, Keras & TensorFlow
# (3rd ed., ch. 16: Luong attention through `tf.keras.layers.Attention()` called on
# `[query, value]` / `[query, value, key]`, its default `use_scale=False`; the Transformer built
# from `tf.keras.layers.MultiHeadAttention(num_heads=..., key_dim=embed_size)` and
# `model.summary()`): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # tf.nn.softmax(x, axis=axis)
    exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"last dimension {M.shape[-1]} != {num_heads} heads x {d_head}")
    Z = np.reshape(M, [M.shape[0], num_heads, d_head])
    return np.transpose(Z, [1, 0, 2])  # tf.transpose(Z, perm=[1, 0, 2])


def merge_heads(H: np.ndarray) -> np.ndarray:
    Z = np.transpose(H, [1, 0, 2])
    return np.reshape(Z, [Z.shape[0], -1])


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # tf.keras.layers.Attention() (Luong-style dot-product attention, use_scale=False):
    # scores = query . key^T, distribution = softmax(scores), output = distribution . value
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    distribution = softmax(scores, axis=-1)
    return np.matmul(distribution, V), distribution


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
    d_head = d_model // num_heads
    query = split_heads(X @ Wq, num_heads, d_head)
    key = split_heads(X @ Wk, num_heads, d_head)
    value = split_heads(X @ Wv, num_heads, d_head)
    # the Attention layer takes its inputs as [query, value, key]
    heads, attention_scores = attention(query, value, key)
    return merge_heads(heads) @ Wo, attention_scores


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = len(weights)
    return [(i, j) for i in range(n_heads) for j in range(i + 1, n_heads)
            if np.any(np.abs(weights[i] - weights[j]) > atol)]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    # what model.summary() prints for MultiHeadAttention(num_heads=h, key_dim=d_model)
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        key_dim = d_model
        qkv = 3 * d_model * h * key_dim              # query/key/value kernels (d_model, h, key_dim)
        out = h * key_dim * d_model                  # output kernel (h, key_dim, d_model)
        if bias:
            qkv += 3 * h * key_dim                   # biases (h, key_dim)
            out += d_model
        counts[h] = qkv + out
    return counts
