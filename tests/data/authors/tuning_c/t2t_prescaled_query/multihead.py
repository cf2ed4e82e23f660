# Modelled on tensorflow/tensor2tensor, tensor2tensor/layers/common_attention.py (split_heads via
# split_last_dimension + transpose [0, 2, 1, 3], combine_heads, dot_product_attention without a
# scale of its own, and multihead_attention's q *= key_depth_per_head ** -0.5 before calling it):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.amax(x, axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / np.sum(ex, axis=axis, keepdims=True)


def split_last_dimension(x: np.ndarray, n: int) -> np.ndarray:
    """Reshape x so that the last dimension becomes two dimensions [..., n, m/n]."""
    return x.reshape(x.shape[:-1] + (n, -1))


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # [length, channels] -> [heads, length, channels / heads]
    return np.transpose(split_last_dimension(M, num_heads), [1, 0, 2])


def combine_last_two_dimensions(x: np.ndarray) -> np.ndarray:
    return x.reshape(x.shape[:-2] + (-1,))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # [heads, length, channels / heads] -> [length, channels]
    return combine_last_two_dimensions(np.transpose(H, [1, 0, 2]))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dot_product_attention: q is expected to be scaled by the caller."""
    logits = np.matmul(Q, np.swapaxes(K, -1, -2))
    weights = softmax(logits, axis=-1)
    return np.matmul(weights, V), weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    total_key_depth = X.shape[-1]
    if total_key_depth % num_heads != 0:
        raise ValueError(
            "Key depth (%d) must be divisible by the number of attention heads (%d)."
            % (total_key_depth, num_heads)
        )
    key_depth_per_head = total_key_depth // num_heads
    q = split_heads(X @ Wq, num_heads, key_depth_per_head)
    k = split_heads(X @ Wk, num_heads, key_depth_per_head)
    v = split_heads(X @ Wv, num_heads, key_depth_per_head)
    q = q * key_depth_per_head**-0.5
    x, weights = attention(q, k, v)
    x = merge_heads(x)
    return x @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(num_heads, num_heads, -1).max(-1)
    return [(i, j) for i in range(num_heads) for j in range(i + 1, num_heads) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for num_heads in head_counts:
        if num_heads <= 0 or d_model % num_heads:
            raise ValueError("d_model (%d) not divisible by num_heads (%d)" % (d_model, num_heads))
        # q, k, v and output transforms: total_key_depth = total_value_depth = d_model
        result[num_heads] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return result
