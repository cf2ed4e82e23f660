# Modelled on Kyubyong/transformer, modules.py (the 2017 `multihead_attention(queries, keys,
# num_units, num_heads, ...)`: Q/K/V = tf.layers.dense(..., activation=tf.nn.relu);
# tf.concat(tf.split(Q, num_heads, axis=2), axis=0) to put the heads in the batch axis;
# tf.matmul(Q_, tf.transpose(K_, [0, 2, 1])) / (K_.get_shape().as_list()[-1] ** 0.5);
# key masks from `tf.sign(tf.reduce_sum(tf.abs(keys), axis=-1))` with -2**32+1 paddings;
# restore shape with tf.concat(tf.split(outputs, num_heads, axis=0), axis=2)): written in that
# style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return x / np.sum(x, axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("num_units must be num_heads * d_head")
    # (T, C) -> (h, T, C/h)
    return np.stack(np.split(M, num_heads, axis=-1), axis=0)


def merge_heads(H):
    # Restore shape: (h, T, C/h) -> (T, C)
    return np.concatenate(np.split(H, H.shape[0], axis=0), axis=2)[0]


def attention(Q, K, V):
    # Q: (h*N, T_q, C/h), K: (h*N, T_k, C/h), V: (h*N, T_k, C/h)
    outputs = np.matmul(Q, np.transpose(K, [0, 2, 1]))  # (h*N, T_q, T_k)
    outputs = outputs / (K.shape[-1] ** 0.5)

    # Key Masking: keys that are all zeros are padding
    key_masks = np.sign(np.sum(np.abs(K), axis=-1))  # (h*N, T_k)
    key_masks = np.repeat(key_masks[:, None, :], Q.shape[1], axis=1)  # (h*N, T_q, T_k)
    paddings = np.ones_like(outputs) * (-2 ** 32 + 1)
    outputs = np.where(key_masks == 0, paddings, outputs)

    weights = softmax(outputs, axis=-1)
    outputs = np.matmul(weights, V)  # (h*N, T_q, C/h)
    return outputs, weights


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    num_units = X.shape[-1]
    if num_units % num_heads != 0:
        raise ValueError(f"num_units={num_units} is not divisible by num_heads={num_heads}")

    # Linear projections
    Q = np.maximum(X @ Wq, 0)  # (T_q, C)
    K = np.maximum(X @ Wk, 0)  # (T_k, C)
    V = np.maximum(X @ Wv, 0)  # (T_k, C)

    # Split and concat
    Q_ = split_heads(Q, num_heads, num_units // num_heads)  # (h, T_q, C/h)
    K_ = split_heads(K, num_heads, num_units // num_heads)
    V_ = split_heads(V, num_heads, num_units // num_heads)

    outputs, weights = attention(Q_, K_, V_)
    outputs = merge_heads(outputs)  # (T_q, C)
    return outputs @ Wo, weights


def distinct_head_pairs(weights, atol=1e-6):
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if not np.all(np.abs(weights[i] - weights[j]) <= atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"num_heads {h} does not divide num_units {d_model}")
        counts[h] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts
