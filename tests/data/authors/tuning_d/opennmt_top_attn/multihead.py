# Modelled on OpenNMT/OpenNMT-py, onmt/modules/multi_headed_attn.py (MultiHeadedAttention:
# assert model_dim % head_count == 0, the shape/unshape closures, query / math.sqrt(dim_per_head),
# key.transpose(2, 3), nn.Softmax(dim=-1), and "Return one attn": top_attn = attn[:, 0]):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """nn.Softmax(dim=-1)"""
    x = x - x.max(-1, keepdims=True)
    ex = np.exp(x)
    return ex / ex.sum(-1, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """projection"""
    return M.reshape(1, -1, num_heads, d_head).transpose(0, 2, 1, 3)[0]


def merge_heads(H: np.ndarray) -> np.ndarray:
    """compute context"""
    head_count, _, dim_per_head = H.shape
    return H[None].transpose(0, 2, 1, 3).reshape(-1, head_count * dim_per_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query = Q / math.sqrt(Q.shape[-1])
    scores = np.matmul(query, np.swapaxes(K, -2, -1))
    attn = softmax(scores)
    return np.matmul(attn, V), attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    model_dim = X.shape[-1]
    head_count = num_heads
    assert model_dim % head_count == 0
    dim_per_head = model_dim // head_count
    batch_size = 1

    def shape(x):
        """projection"""
        return x.reshape(batch_size, -1, head_count, dim_per_head).transpose(0, 2, 1, 3)

    def unshape(x):
        """compute context"""
        return x.transpose(0, 2, 1, 3).reshape(batch_size, -1, head_count * dim_per_head)

    # 1) Project key, value, and query.
    key = shape(X @ Wk)
    value = shape(X @ Wv)
    query = shape(X @ Wq)

    # 2) Calculate and scale scores.
    query = query / math.sqrt(dim_per_head)
    scores = np.matmul(query, key.transpose(0, 1, 3, 2))

    # 3) Compute context vectors.
    attn = softmax(scores)
    context = unshape(np.matmul(attn, value))
    output = context @ Wo

    # Return one attn
    top_attn = attn[:, 0, :, :]
    return output[0], top_attn[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    head_count = weights.shape[0]
    flat = weights.reshape(head_count, -1)
    pairs = []
    for i in range(head_count):
        for j in range(i + 1, head_count):
            if np.abs(flat[i] - flat[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for head_count in head_counts:
        if d_model % head_count != 0:
            raise ValueError("model_dim %d is not divisible by head_count %d" % (d_model, head_count))
        dim_per_head = d_model // head_count
        # linear_keys, linear_values, linear_query: model_dim -> head_count * dim_per_head
        per_linear = d_model * head_count * dim_per_head + (head_count * dim_per_head if bias else 0)
        final_linear = d_model * d_model + (d_model if bias else 0)
        counts[head_count] = 3 * per_linear + final_linear
    return counts
