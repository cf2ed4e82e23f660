# Modelled on augustwester/tiny-vit, att.py (Attention: self.scale = 1 / dim_head ** 0.5, one W for
# q, k and v, rearrange(qkv, "b t (k h d) -> k b h t d"), q @ k.permute(0, 1, 3, 2), then
# softmax(qkT / self.scale) and rearrange(att, "b h t d -> b t (h d)")): written in that style for
# this test corpus, not copied. Without the batch axis permute(0, 1, 3, 2) becomes (0, 2, 1).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    t, hd = M.shape
    if hd != num_heads * d_head:
        raise ValueError(f"{hd} != {num_heads} * {d_head}")
    return M.reshape(t, num_heads, d_head).transpose(1, 0, 2)  # "t (h d) -> h t d"


def merge_heads(H: np.ndarray) -> np.ndarray:
    h, t, d = H.shape
    return H.transpose(1, 0, 2).reshape(t, h * d)  # "h t d -> t (h d)"


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = 1 / Q.shape[-1] ** 0.5
    qkT = Q @ K.transpose(0, 2, 1)
    att = softmax(qkT / scale, axis=-1)
    return att @ V, att


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    t, dim = X.shape
    if dim % num_heads:
        raise ValueError("dim must be divisible by num_heads")
    dim_head = dim // num_heads
    W = np.concatenate([Wq, Wk, Wv], axis=1)
    qkv = X @ W
    # "t (k h d) -> k h t d"
    q, k, v = qkv.reshape(t, 3, num_heads, dim_head).transpose(1, 2, 0, 3)
    att, weights = attention(q, k, v)
    cat = att.transpose(1, 0, 2).reshape(t, dim)  # "h t d -> t (h d)"
    return cat @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from torch import nn

    return {
        h: sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }
