# Modelled on Stanford CS336 (Language Modeling from Scratch), assignment 1 (softmax(x, dim),
# scaled_dot_product_attention(Q, K, V, mask) with einsum "... queries d_k, ... keys d_k ->
# ... queries keys", causal multihead_self_attention with rearrange "... seq (h d) -> ... h seq d",
# Linear weights stored as (d_out, d_in)), rewritten in NumPy because the module allows NumPy
# only: written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    x_exp = np.exp(x - x_max)
    return x_exp / np.sum(x_exp, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # rearrange(M, "seq (h d) -> h seq d", h=num_heads)
    seq, hd = M.shape
    if hd != num_heads * d_head:
        raise ValueError(f"last dim {hd} != num_heads * d_head = {num_heads * d_head}")
    return np.einsum("shd->hsd", M.reshape(seq, num_heads, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # rearrange(H, "h seq d -> seq (h d)")
    h, seq, d = H.shape
    return np.einsum("hsd->shd", H).reshape(seq, h * d)


def attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    d_k = K.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))
    weights = softmax(scores, axis=-1)
    return np.einsum("...qk,...kd->...qd", weights, V), weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} not divisible by num_heads={num_heads}")
    d_head = d_model // num_heads
    Q = split_heads(X @ Wq, num_heads, d_head)
    K = split_heads(X @ Wk, num_heads, d_head)
    V = split_heads(X @ Wv, num_heads, d_head)
    # causal mask: query i may attend to keys j <= i
    causal_mask = np.tril(np.ones((seq_len, seq_len), dtype=bool))
    out, weights = attention(Q, K, V, mask=causal_mask)
    return merge_heads(out) @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    diff = np.abs(weights[:, None, :, :] - weights[None, :, :, :]).max(axis=(-2, -1))
    return [(i, j) for i in range(h) for j in range(i + 1, h) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"num_heads={h} does not divide d_model={d_model}")
        # W_Q, W_K, W_V, W_O: each (d_model, d_model); our Linear has no bias
        counts[h] = 4 * d_model * d_model
    return counts
