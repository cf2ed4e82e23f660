# Modelled on lucidrains/vit-pytorch, vit_pytorch/vit.py (Attention: to_qkv(x).chunk(3, dim=-1),
# rearrange(t, 'b n (h d) -> b h n d'), dots = matmul(q, k.transpose(-1, -2)) * self.scale with
# scale = dim_head ** -0.5, rearrange(out, 'b h n d -> b n (h d)')): written in that style for this
# test corpus, not copied. einops is replaced by small helpers of the student's own and np.einsum.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def exists(val):
    return val is not None


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    x = np.exp(x)
    return x / x.sum(axis=axis, keepdims=True)


def _to_heads(t: np.ndarray, h: int) -> np.ndarray:
    """'n (h d) -> h n d'"""
    n, hd = t.shape
    return np.einsum("nhd->hnd", t.reshape(n, h, hd // h))


def _from_heads(t: np.ndarray) -> np.ndarray:
    """'h n d -> n (h d)'"""
    h, n, d = t.shape
    return np.einsum("hnd->nhd", t).reshape(n, h * d)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"expected {num_heads} * {d_head} features, got {M.shape[-1]}")
    return _to_heads(M, num_heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return _from_heads(H)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** -0.5
    dots = np.einsum("...id,...jd->...ij", Q, K) * scale
    attn = softmax(dots, axis=-1)
    out = np.einsum("...ij,...jd->...id", attn, V)
    return out, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    dim = X.shape[-1]
    if dim % num_heads != 0:
        raise ValueError(f"dim {dim} must be divisible by heads {num_heads}")
    to_qkv = np.concatenate((Wq, Wk, Wv), axis=-1)
    qkv = np.split(X @ to_qkv, 3, axis=-1)
    q, k, v = map(lambda t: _to_heads(t, num_heads), qkv)
    out, attn = attention(q, k, v)
    out = _from_heads(out)
    return out @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    far = np.abs(weights[:, None] - weights[None]).max(axis=(-1, -2)) > atol
    return [(i, j) for i in range(h) for j in range(i + 1, h) if far[i, j]]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from torch import nn

    counts = {}
    for heads in head_counts:
        if d_model % heads:
            raise ValueError(f"heads={heads} does not divide dim={d_model}")
        counts[heads] = sum(p.numel() for p in nn.MultiheadAttention(d_model, heads,
                                                                     bias=bias).parameters())
    return counts
