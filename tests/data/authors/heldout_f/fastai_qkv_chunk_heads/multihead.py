# Modelled on fastai/course22p2, nbs/27_attention.ipynb ("Stable diffusion from the foundations":
# SelfAttention with s = (q@k.transpose(1,2))/self.scale and s.softmax(dim=-1)@v;
# heads_to_batch / batch_to_heads; SelfAttentionMultiHead with self.qkv = nn.Linear(ni, ni*3),
# rearrange(x, 'n s (h d) -> (n h) s d') and then torch.chunk(x, 3, dim=-1), scale =
# math.sqrt(ni/nheads)): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # heads_to_batch(x, heads)
    sl, d = M.shape
    x = M.reshape(sl, num_heads, -1)
    return x.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # batch_to_heads(x, heads)
    heads, sl, d = H.shape
    return H.transpose(1, 0, 2).reshape(sl, d * heads)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = math.sqrt(Q.shape[-1])
    s = (Q @ np.swapaxes(K, 1, 2)) / scale
    w = softmax(s, axis=-1)
    return w @ V, w


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    sl, ni = X.shape
    if ni % num_heads:
        raise ValueError(f"{ni} channels can't be split into {num_heads} heads")
    scale = math.sqrt(ni / num_heads)
    qkv = X @ np.concatenate([Wq, Wk, Wv], axis=-1)  # self.qkv(x): (sl, ni*3)
    x = split_heads(qkv, num_heads, 3 * ni // num_heads)  # 's (h d) -> h s d'
    q, k, v = np.split(x, 3, axis=-1)  # torch.chunk(x, 3, dim=-1)
    s = (q @ np.swapaxes(k, 1, 2)) / scale
    w = softmax(s, axis=-1)
    x = merge_heads(w @ v)  # 'h s d -> s (h d)'
    return x @ Wo, w


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nh = weights.shape[0]
    return [(i, j) for i in range(nh) for j in range(i + 1, nh)
            if (np.abs(weights[i] - weights[j]) > atol).any()]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    res = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} heads don't divide d_model={d_model}")
        nm = nn.MultiheadAttention(d_model, num_heads=h, bias=bias, batch_first=True)
        res[h] = sum(p.numel() for p in nm.parameters())
    return res
