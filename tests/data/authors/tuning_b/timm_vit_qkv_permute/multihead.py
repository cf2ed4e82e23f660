# Modelled on huggingface/pytorch-image-models (timm), timm/models/vision_transformer.py
# (Attention: one qkv Linear, reshape(B, N, 3, heads, head_dim).permute(2, 0, 3, 1, 4),
# q * scale before q @ k.transpose(-2, -1)): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.amax(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    N, C = M.shape
    if C != num_heads * d_head:
        raise ValueError(f"dim {C} should be num_heads * head_dim = {num_heads * d_head}")
    return M.reshape(N, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, N, head_dim = H.shape
    # x.transpose(1, 2).reshape(B, N, C)
    return H.transpose(1, 0, 2).reshape(N, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** -0.5
    q = Q * scale
    attn = q @ np.swapaxes(K, -2, -1)
    attn = softmax(attn, axis=-1)
    # attn_drop is Dropout(0.) at inference: left out
    return attn @ V, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    N, C = X.shape
    if C % num_heads != 0:
        raise ValueError("dim should be divisible by num_heads")
    head_dim = C // num_heads
    W_qkv = np.concatenate([Wq, Wk, Wv], axis=1)  # self.qkv = nn.Linear(dim, dim * 3)
    qkv = (X @ W_qkv).reshape(N, 3, num_heads, head_dim).transpose(1, 2, 0, 3)
    q, k, v = qkv[0], qkv[1], qkv[2]
    x, attn = attention(q, k, v)
    x = x.transpose(1, 0, 2).reshape(N, C)
    x = x @ Wo  # self.proj
    return x, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    w = np.asarray(weights)
    nh = w.shape[0]
    diff = np.abs(w[:, None] - w[None, :]).reshape(nh, nh, -1).max(-1)
    return [(i, j) for i in range(nh) for j in range(i + 1, nh) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    head_counts = list(head_counts)
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"dim {d_model} should be divisible by num_heads {h}")
    return {
        h: sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }
