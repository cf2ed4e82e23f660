# Modelled on karpathy/nanoGPT, model.py (CausalSelfAttention, the "manual implementation" branch):
# written in that style for this test corpus, not copied. A student porting nanoGPT's attention
# keeps its causal mask buffer (a module-level tril) and masked_fill, translated to np.where.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# causal mask to ensure that attention is only applied to the left in the input sequence
BLOCK_SIZE = 256
_bias = np.tril(np.ones((BLOCK_SIZE, BLOCK_SIZE))).reshape(1, BLOCK_SIZE, BLOCK_SIZE)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    e_x = np.exp(x - x_max)
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    T, C = M.shape  # sequence length, embedding dimensionality (n_embd)
    if C != num_heads * d_head:
        raise ValueError(f"expected {num_heads * d_head} features, got {C}")
    # (T, C) -> (T, nh, hs) -> (nh, T, hs): move head forward to be the batch dim
    return M.reshape(T, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    nh, T, hs = H.shape
    # re-assemble all head outputs side by side
    return H.transpose(1, 0, 2).reshape(T, nh * hs)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    T = Q.shape[-2]
    # causal self-attention; Self-attend: (nh, T, hs) x (nh, hs, T) -> (nh, T, T)
    att = (Q @ np.swapaxes(K, -2, -1)) * (1.0 / math.sqrt(K.shape[-1]))
    att = np.where(_bias[..., :T, :T] == 0, -np.inf, att)
    att = softmax(att, axis=-1)
    y = att @ V  # (nh, T, T) x (nh, T, hs) -> (nh, T, hs)
    return y, att


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    T, C = X.shape
    if C % num_heads != 0:
        raise ValueError(f"n_embd={C} must be divisible by n_head={num_heads}")
    # calculate query, key, values for all heads in batch (one c_attn matmul, then split)
    c_attn = np.concatenate([Wq, Wk, Wv], axis=1)
    q, k, v = np.split(X @ c_attn, 3, axis=1)
    hs = C // num_heads
    q = split_heads(q, num_heads, hs)
    k = split_heads(k, num_heads, hs)
    v = split_heads(v, num_heads, hs)
    y, att = attention(q, k, v)
    y = merge_heads(y)
    # output projection
    return y @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nh = weights.shape[0]
    pairs = []
    for i in range(nh):
        for j in range(i + 1, nh):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"n_head={n_head} does not divide n_embd={d_model}")
        m = torch.nn.MultiheadAttention(d_model, n_head, bias=bias)
        counts[n_head] = sum(p.numel() for p in m.parameters())
    return counts
