# Modelled on karpathy/minGPT, mingpt/model.py (CausalSelfAttention.forward): written in that style
# for this test corpus, not copied. The student writes attention() with minGPT's causal mask and
# then, in multi_head_attention, re-types minGPT's forward inline (mask again) instead of calling it.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    ez = np.exp(z)
    return ez / ez.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    T, C = M.shape
    if C != num_heads * d_head:
        raise ValueError("C must equal n_head * head_size")
    return M.reshape(T, num_heads, d_head).swapaxes(0, 1)  # (nh, T, hs)


def merge_heads(H: np.ndarray) -> np.ndarray:
    nh, T, hs = H.shape
    return H.swapaxes(0, 1).reshape(T, nh * hs)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    T, S = Q.shape[-2], K.shape[-2]
    att = (Q @ np.swapaxes(K, -2, -1)) * (1.0 / math.sqrt(K.shape[-1]))
    mask = np.tril(np.ones((T, S)))  # causal mask: only attend to the left
    att = np.where(mask == 0, float("-inf"), att)
    att = softmax(att, axis=-1)
    return att @ V, att


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
        raise ValueError(f"n_embd {C} is not a multiple of n_head {num_heads}")
    hs = C // num_heads
    # calculate query, key, values for all heads and move head forward to be the batch dim
    k = split_heads(X @ Wk, num_heads, hs)  # (nh, T, hs)
    q = split_heads(X @ Wq, num_heads, hs)
    v = split_heads(X @ Wv, num_heads, hs)
    # causal self-attention; Self-attend: (nh, T, hs) x (nh, hs, T) -> (nh, T, T)
    att = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
    att = np.where(np.tril(np.ones((T, T)))[None] == 0, float("-inf"), att)
    att = softmax(att, axis=-1)
    y = att @ v  # (nh, T, T) x (nh, T, hs) -> (nh, T, hs)
    y = merge_heads(y)  # re-assemble all head outputs side by side
    return y @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    out = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                out.append((i, j))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    result = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        block = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        result[h] = sum(p.numel() for p in block.parameters())
    return result
