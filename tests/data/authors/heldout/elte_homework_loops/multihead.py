# Modelled on gabar92/elte_advanced_deep_learning, assignments/02_multi-head_self-attention
# (a homework skeleton: create_qkv(), scaled_dot_product_attention(), multi_head_self_attention()
# that splits into heads, attends per head and concatenates): written in that style for this test
# corpus, not copied. A plain loop over heads everywhere.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def create_qkv(inputs, weights_q, weights_k, weights_v):
    """Compute queries, keys, and values from the input tensor."""
    return inputs @ weights_q, inputs @ weights_k, inputs @ weights_v


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"cannot split {M.shape[-1]} features into {num_heads} heads of size {d_head}"
        )
    heads = []
    for h in range(num_heads):
        heads.append(M[:, h * d_head : (h + 1) * d_head])
    return np.stack(heads, axis=0)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate([H[h] for h in range(H.shape[0])], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scaled_dot_product_attention"""
    d_k = K.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(d_k)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, V), weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """multi_head_self_attention"""
    d_model = X.shape[1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_head = d_model // num_heads
    Q, K, V = create_qkv(X, Wq, Wk, Wv)
    Qh = split_heads(Q, num_heads, d_head)
    Kh = split_heads(K, num_heads, d_head)
    Vh = split_heads(V, num_heads, d_head)
    outputs, all_weights = [], []
    for h in range(num_heads):
        out, w = attention(Qh[h], Kh[h], Vh[h])
        outputs.append(out)
        all_weights.append(w)
    concat = merge_heads(np.stack(outputs))
    return concat @ Wo, np.stack(all_weights)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    result = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"head count {h} does not divide d_model={d_model}")
        module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in module.parameters())
    return counts
