# Modelled on facebookresearch/xformers, xformers/components/attention/core.py
# (scaled_query_key_softmax: q = q / math.sqrt(k.size(-1)), att = q @ k.transpose(-2, -1),
# _softmax(att) over dim=att.ndim - 1; scaled_dot_product_attention with an optional dropout) and
# xformers/components/multi_head_dispatch.py (MultiHeadDispatch: _split_heads viewing (B, S, H, Hs),
# transpose(1, 2), flatten(0, 1); _fold_heads; dim_model % num_heads checked up front): written in
# that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.amax(x, axis=axis, keepdims=True)
    unnormalized = np.exp(x - x_max)
    return unnormalized / unnormalized.sum(axis=axis, keepdims=True)


def _split_heads(t: np.ndarray, B: int, S: int, H: int, Hs: int) -> np.ndarray:
    # (B, S, H * Hs) -> (B, S, H, Hs) -> (B, H, S, Hs) -> (B * H, S, Hs)
    return t.reshape(B, S, H, Hs).transpose(0, 2, 1, 3).reshape(B * H, S, Hs)


def _fold_heads(t: np.ndarray, B: int, S: int, H: int, Hs: int) -> np.ndarray:
    # (B * H, S, Hs) -> (B, H, S, Hs) -> (B, S, H, Hs) -> (B, S, H * Hs)
    return t.reshape(B, H, S, Hs).transpose(0, 2, 1, 3).reshape(B, S, H * Hs)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    S, dim_model = M.shape
    if dim_model != num_heads * d_head:
        raise ValueError(
            f"The embedding dimension {dim_model} is not {num_heads} heads of size {d_head}"
        )
    return _split_heads(M[None], 1, S, num_heads, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, S, Hs = H.shape
    return _fold_heads(H, 1, S, num_heads, Hs)[0]


def scaled_query_key_softmax(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    q = q / math.sqrt(k.shape[-1])
    att = q @ np.swapaxes(k, -2, -1)
    return softmax(att, axis=att.ndim - 1)


def attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, dropout: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    att = scaled_query_key_softmax(Q, K)
    att_drop = att
    if dropout > 0.0:  # the attention dropout of training; 0.0 for a plain forward pass
        keep = np.random.random_sample(att.shape) >= dropout
        att_drop = att * keep / (1.0 - dropout)
    y = att_drop @ V
    return y, att


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    S, dim_model = X.shape
    if dim_model % num_heads != 0:
        raise ValueError(
            f"The embedding dimension {dim_model} must be divisible by the number of heads"
            f" {num_heads}"
        )
    B = 1
    dim_key = dim_model // num_heads
    q, k, v = X[None] @ Wq, X[None] @ Wk, X[None] @ Wv
    q = _split_heads(q, B, S, num_heads, dim_key)
    k = _split_heads(k, B, S, num_heads, dim_key)
    v = _split_heads(v, B, S, num_heads, dim_key)
    z, att = attention(q, k, v)
    z = _fold_heads(z, B, S, num_heads, dim_key)[0]
    return z @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    H = weights.shape[0]
    flat = weights.reshape(H, -1)
    pairs = []
    for i in range(H):
        for j in range(i + 1, H):
            if np.max(np.abs(flat[i] - flat[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide dim_model={d_model}")
        # in-projection (q, k, v) and out-projection, each dim_model x dim_model
        weights = 4 * d_model * d_model
        biases = 4 * d_model if bias else 0
        counts[num_heads] = weights + biases
    return counts
