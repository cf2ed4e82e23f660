# Modelled on NVIDIA/Megatron-LM, megatron/core/transformer/dot_product_attention.py and
# attention.py (norm_factor = math.sqrt(hidden_size_per_attention_head), with
# apply_query_key_layer_scaling: norm_factor *= layer_number and the softmax scaled back by
# coeff; baddbmm(..., alpha=1.0 / norm_factor); the fused query_key_value projection laid out
# [np, 3 * hn] per head; [sq, b, np, hn] tensors): written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

LAYER_NUMBER = 1
APPLY_QUERY_KEY_LAYER_SCALING = True


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    sq, hidden = M.shape
    if hidden != num_heads * d_head:
        raise ValueError(f"hidden size {hidden} != {num_heads} x {d_head}")
    # [sq, hp] -> [sq, np, hn] -> [np, sq, hn]
    return M.reshape(sq, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # [np, sq, hn] -> [sq, np, hn] -> [sq, hp]
    np_, sq, hn = H.shape
    return H.transpose(1, 0, 2).reshape(sq, np_ * hn)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norm_factor = math.sqrt(Q.shape[-1])
    coeff = None
    if APPLY_QUERY_KEY_LAYER_SCALING:
        coeff = LAYER_NUMBER
        norm_factor *= coeff
    # matmul_result = baddbmm(..., q, k^T, beta=0.0, alpha=1.0 / norm_factor)
    matmul_result = np.matmul(Q, np.swapaxes(K, -1, -2)) * (1.0 / norm_factor)
    if coeff is not None:
        matmul_result = matmul_result * coeff  # FusedScaleMaskSoftmax(scale=coeff)
    attention_probs = softmax(matmul_result, axis=-1)
    return np.matmul(attention_probs, V), attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    sq, hidden_size = X.shape
    if hidden_size % num_heads != 0:
        raise ValueError(f"hidden_size ({hidden_size}) not divisible by num_attention_heads ({num_heads})")
    hn = hidden_size // num_heads
    query_layer = split_heads(X @ Wq, num_heads, hn)
    key_layer = split_heads(X @ Wk, num_heads, hn)
    value_layer = split_heads(X @ Wv, num_heads, hn)

    # core attention, inline: [np, sq, sk]
    norm_factor = math.sqrt(hidden_size)
    attention_scores = np.matmul(query_layer, key_layer.transpose(0, 2, 1)) / norm_factor
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = np.matmul(attention_probs, value_layer)
    return merge_heads(context_layer) @ Wo, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = weights.shape[0]
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if np.max(np.abs(weights[i] - weights[j])) > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"hidden_size {d_model} not divisible by num_attention_heads {num_heads}")
        # linear_qkv: [h, 3h] + [3h]; linear_proj: [h, h] + [h] (add_bias_linear defaults to True)
        result[num_heads] = 3 * d_model * d_model + 3 * d_model + d_model * d_model + d_model
    return result
