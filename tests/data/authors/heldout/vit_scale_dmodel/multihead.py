# Modelled on thubZ09/paper-implementations, ViT/model/attention.py (Attention with
# self.scale = dim ** -0.5 for the model width dim, to_qkv(x).chunk(3), reshape(b, n, h, -1) and
# transpose(1, 2), dots.softmax(dim=-1)): written in that style for this test corpus, not copied.
# attention() is written with the head width; multi_head_attention re-types the forward inline.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    n, dim = M.shape
    if dim != num_heads * d_head:
        raise ValueError(f"dim {dim} is not heads * dim_head = {num_heads * d_head}")
    return M.reshape(n, num_heads, -1).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    h, n, d = H.shape
    return H.transpose(1, 0, 2).reshape(n, -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** -0.5
    dots = np.matmul(Q, np.swapaxes(K, -1, -2)) * scale
    attn = softmax(dots, axis=-1)
    return np.matmul(attn, V), attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    n, dim = X.shape
    if dim % num_heads != 0:
        raise ValueError("dim must be divisible by heads")
    h = num_heads
    scale = dim ** -0.5
    qkv = np.concatenate([Wq, Wk, Wv], axis=1)
    q, k, v = (split_heads(t, h, dim // h) for t in np.split(X @ qkv, 3, axis=-1))
    dots = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    attn = softmax(dots, axis=-1)
    out = np.matmul(attn, v)
    out = merge_heads(out)
    return out @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    return [(i, j) for i in range(h) for j in range(i + 1, h)
            if np.any(np.abs(weights[i] - weights[j]) > atol)]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for heads in head_counts:
        if d_model % heads:
            raise ValueError(f"heads={heads} must divide dim={d_model}")
        layer = nn.MultiheadAttention(d_model, heads, bias=bias)
        counts[heads] = sum(p.numel() for p in layer.parameters())
    return counts
