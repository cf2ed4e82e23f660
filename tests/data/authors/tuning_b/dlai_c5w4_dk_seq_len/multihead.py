# Modelled on the deeplearning.ai Sequence Models course, week 4 assignment "Transformer
# Architecture with TensorFlow" (scaled_dot_product_attention, after the TensorFlow transformer
# tutorial): written in that style for this test corpus, not copied. The student read dk off the
# wrong axis of k's "(..., seq_len_k, depth)" and kept the optional mask added as mask * -1e9.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # tf.keras.activations.softmax
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Split the last dimension into (num_heads, depth) and put num_heads first."""
    seq_len, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError(f"d_model {d_model} != num_heads * depth {num_heads * d_head}")
    x = np.reshape(M, (seq_len, num_heads, d_head))
    return np.transpose(x, (1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, depth = H.shape
    concat_attention = np.transpose(H, (1, 0, 2))  # (seq_len, num_heads, depth)
    return np.reshape(concat_attention, (seq_len, num_heads * depth))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None):
    """
    q: query shape == (..., seq_len_q, depth)
    k: key shape == (..., seq_len_k, depth)
    v: value shape == (..., seq_len_v, depth_v)
    mask: float array broadcastable to (..., seq_len_q, seq_len_k). Defaults to None.

    Returns: output, attention_weights
    """
    matmul_qk = np.matmul(Q, np.swapaxes(K, -1, -2))  # (..., seq_len_q, seq_len_k)

    # scale matmul_qk
    dk = np.float32(K.shape[-2])
    scaled_attention_logits = matmul_qk / np.sqrt(dk)

    # add the mask to the scaled tensor.
    if mask is not None:
        scaled_attention_logits += (1.0 - mask) * -1e9

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
    k = split_heads(X @ Wk, num_heads, depth)
    v = split_heads(X @ Wv, num_heads, depth)

    scaled_attention, attention_weights = attention(q, k, v, None)
    concat_attention = merge_heads(scaled_attention)  # (seq_len_q, d_model)
    output = concat_attention @ Wo  # self.dense
    return output, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    result = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
        layer = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in layer.parameters())
    return counts
