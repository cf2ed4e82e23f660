# Modelled on openai/guided-diffusion, guided_diffusion/unet.py (QKVAttention, the "new order":
# `q, k, v = qkv.chunk(3, dim=1)`, `scale = 1 / math.sqrt(math.sqrt(ch))`,
# `th.einsum("bct,bcs->bts", (q * scale).view(bs * self.n_heads, ch, length), ...)  # More stable
# with f16 than dividing afterwards`, `th.softmax(weight.float(), dim=-1).type(weight.dtype)`,
# `th.einsum("bts,bcs->bct", weight, v)`, `a.reshape(bs, -1, length)`; AttentionBlock's 1x1 conv
# `qkv` and `proj_out`): written in that style for this test corpus, not copied. Channels-first
# [C x T] inside, the exercise's [T x C] at the edges; AttentionBlock's GroupNorm and residual are
# the block's, not the attention's, and are left out.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    # at least float32, like th.softmax(weight.float(), ...); float64 stays float64
    x = x.astype(np.promote_types(x.dtype, np.float32))
    x = x - x.max(axis=axis, keepdims=True)
    w = np.exp(x)
    return w / w.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """
    :param M: a [T x (H * C)] array.
    :return: an [H x T x C] array: head h holds channels h*C:(h+1)*C.
    """
    M = np.asarray(M)
    length, width = M.shape
    if width != num_heads * d_head:
        raise ValueError(f"width {width} is not num_heads * d_head = {num_heads} * {d_head}")
    x = M.T.reshape(num_heads, d_head, length)  # [(H * C) x T] -> [H x C x T]
    return np.swapaxes(x, 1, 2)  # [H x T x C]


def merge_heads(H: np.ndarray) -> np.ndarray:
    """
    :param H: an [H x T x C] array.
    :return: a [T x (H * C)] array.
    """
    H = np.asarray(H)
    n_heads, length, ch = H.shape
    a = np.swapaxes(H, 1, 2)  # [H x C x T]
    return a.reshape(n_heads * ch, length).T  # a.reshape(bs, -1, length), then [T x (H * C)]


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """
    Apply QKV attention.
    :param Q, K, V: [... x T x C], [... x S x C], [... x S x C'] arrays.
    :return: ([... x T x C'] after attention, [... x T x S] weights).
    """
    q = np.swapaxes(Q, -1, -2)  # [... x C x T]
    k = np.swapaxes(K, -1, -2)  # [... x C x S]
    v = np.swapaxes(V, -1, -2)  # [... x C' x S]
    ch = q.shape[-2]
    scale = 1 / math.sqrt(math.sqrt(ch))
    weight = np.einsum(
        "...ct,...cs->...ts", q * scale, k * scale
    )  # More stable with f16 than dividing afterwards
    weight = softmax(weight, axis=-1)
    a = np.einsum("...ts,...cs->...ct", weight, v)
    return np.swapaxes(a, -1, -2), weight


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X)
    length, channels = X.shape
    if num_heads <= 0 or channels % num_heads != 0:
        raise ValueError(f"channels {channels} is not divisible by num_heads {num_heads}")
    ch = channels // num_heads
    # self.qkv: one 1x1 conv to 3 * channels, then the new order: chunk into q, k, v
    qkv = X @ np.concatenate([Wq, Wk, Wv], axis=1)  # [T x 3C]
    q, k, v = np.split(qkv, 3, axis=1)
    a, weight = attention(
        split_heads(q, num_heads, ch), split_heads(k, num_heads, ch), split_heads(v, num_heads, ch)
    )
    h = merge_heads(a)
    return h @ Wo, weight  # self.proj_out


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    weights = np.asarray(weights)
    n_heads = weights.shape[0]
    flat = weights.reshape(n_heads, -1)
    diff = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1)  # [H x H]
    return [(i, j) for i in range(n_heads) for j in range(i + 1, n_heads) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch as th

    head_counts = list(head_counts)
    for n_heads in head_counts:
        if n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"q,k,v channels {d_model} is not divisible by num_heads {n_heads}")
    return {
        n_heads: sum(p.numel() for p in th.nn.MultiheadAttention(d_model, n_heads, bias=bias).parameters())
        for n_heads in head_counts
    }
