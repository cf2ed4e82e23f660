# Modelled on Jay Alammar's "The Illustrated Transformer" and the NumPy walk-throughs that follow it
# (a one-line softmax over a 2-D score matrix, z_i = softmax(q_i k_i^T / sqrt(d_k)) v_i per head,
# the z_i concatenated and multiplied by W^O): written in that style for this test corpus, not
# copied. The softmax is written for one head's (n, n) score matrix.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.exp(x) / np.exp(x).sum(axis=-1)[:, np.newaxis]


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    n, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError("M must have num_heads * d_head columns")
    return np.array([M[:, i * d_head : (i + 1) * d_head] for i in range(num_heads)])


def merge_heads(H: np.ndarray) -> np.ndarray:
    # "concatenate the z matrices" side by side
    return np.hstack(list(H))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = K.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    weights = softmax(scores)
    return weights @ V, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError("num_heads must divide d_model")
    d_k = d_model // num_heads
    Qs = split_heads(X @ Wq, num_heads, d_k)
    Ks = split_heads(X @ Wk, num_heads, d_k)
    Vs = split_heads(X @ Wv, num_heads, d_k)
    zs, ws = [], []
    for i in range(num_heads):
        z, w = attention(Qs[i], Ks[i], Vs[i])
        zs.append(z)
        ws.append(w)
    Z = merge_heads(np.array(zs))
    return Z @ Wo, np.array(ws)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    out = {}
    for h in head_counts:
        if h <= 0 or d_model % h:
            raise ValueError(f"{h} does not divide {d_model}")
        out[h] = sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=bias).parameters())
    return out
