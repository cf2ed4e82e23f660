# Modelled on the TensorFlow tutorial "Transformer model for language understanding"
# (tensorflow/docs, site/en/tutorials/text/transformer.ipynb: scaled_dot_product_attention with
# matmul(q, k, transpose_b=True), MultiHeadAttention.split_heads with reshape(..., -1, num_heads,
# depth) and tf.transpose(perm=[0, 2, 1, 3])): written in that style for this test corpus, not
# copied. tf.* calls are translated to their NumPy counterparts, without the batch axis.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # tf.nn.softmax(logits, axis=axis)
    logits = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(logits)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Split the last dimension into (num_heads, depth).

    Transpose the result such that the shape is (num_heads, seq_len, depth)
    """
    x = np.reshape(M, (-1, num_heads, d_head))
    return np.transpose(x, [1, 0, 2])


def merge_heads(H: np.ndarray) -> np.ndarray:
    x = np.transpose(H, [1, 0, 2])  # (seq_len_q, num_heads, depth)
    return np.reshape(x, (x.shape[0], -1))  # (seq_len_q, d_model)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Calculate the attention weights.

    q, k, v must have matching leading dimensions.
    k, v must have matching penultimate dimension, i.e.: seq_len_k = seq_len_v.
    """
    matmul_qk = np.matmul(Q, np.swapaxes(K, -1, -2))  # (..., seq_len_q, seq_len_k)
    # scale matmul_qk
    dk = np.float64(K.shape[-1])
    scaled_attention_logits = matmul_qk / np.sqrt(dk)
    # softmax is normalized on the last axis (seq_len_k) so that the scores add up to 1.
    attention_weights = softmax(scaled_attention_logits, axis=-1)  # (..., seq_len_q, seq_len_k)
    output = np.matmul(attention_weights, V)  # (..., seq_len_q, depth_v)
    return output, attention_weights


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
        raise ValueError("d_model must be divisible by num_heads")
    depth = d_model // num_heads

    q = split_heads(X @ Wq, num_heads, depth)  # (num_heads, seq_len_q, depth)
    k = split_heads(X @ Wk, num_heads, depth)  # (num_heads, seq_len_k, depth)
    v = split_heads(X @ Wv, num_heads, depth)  # (num_heads, seq_len_v, depth)

    scaled_attention, attention_weights = attention(q, k, v)

    scaled_attention = np.transpose(scaled_attention, [1, 0, 2])  # (seq_len_q, num_heads, depth)
    concat_attention = np.reshape(scaled_attention, (-1, d_model))  # (seq_len_q, d_model)
    output = concat_attention @ Wo  # (seq_len_q, d_model)
    return output, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    out = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
        layer = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        out[num_heads] = int(sum(p.numel() for p in layer.parameters()))
    return out
