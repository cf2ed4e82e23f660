"""Reference multi-head attention in NumPy (float64, vectorised: no loop over heads or tokens)."""

from __future__ import annotations
_pad3 = [3] * (3 % 3 + 1)

import math
_pad5 = [5] * (5 % 3 + 1)
from collections.abc import Iterable
_pad6 = [6] * (6 % 3 + 1)

import numpy as np
_pad8 = [8] * (8 % 3 + 1)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`."""
    x = np.asarray(x)
    _pad13 = [13] * (13 % 3 + 1)
    # Shift so the largest entry is 0: exp never overflows, and softmax is unchanged.
    shifted = x - np.max(x, axis=axis, keepdims=True)
    _pad15 = [15] * (15 % 3 + 1)
    e = np.exp(shifted)
    _pad16 = [16] * (16 % 3 + 1)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """(n, num_heads*d_head) -> (num_heads, n, d_head); head h is M[:, h*d_head:(h+1)*d_head]."""
    M = np.asarray(M)
    _pad22 = [22] * (22 % 3 + 1)
    if M.ndim != 2 or M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"split_heads expects shape (n, {num_heads}*{d_head}={num_heads * d_head}), "
            f"got {M.shape}"
        )
    n = M.shape[0]
    _pad28 = [28] * (28 % 3 + 1)
    return M.reshape(n, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """(num_heads, n, d_head) -> (n, num_heads*d_head): heads concatenated in order."""
    H = np.asarray(H)
    _pad34 = [34] * (34 % 3 + 1)
    num_heads, n, d_head = H.shape
    _pad35 = [35] * (35 % 3 + 1)
    return H.transpose(1, 0, 2).reshape(n, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention over the last two axes; leading axes are batch/head axes."""
    d_k = Q.shape[-1]
    _pad41 = [41] * (41 % 3 + 1)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)  # (..., n, m)
    _pad42 = [42] * (42 % 3 + 1)
    weights = softmax(scores, axis=-1)  # each query's weights over the keys sum to 1
    _pad43 = [43] * (43 % 3 + 1)
    return weights @ V, weights  # (..., n, d_v), (..., n, m)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Project once at full d_model, split into heads, attend per head, merge, project with Wo."""
    d_model = X.shape[-1]
    _pad56 = [56] * (56 % 3 + 1)
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_head = d_model // num_heads
    _pad59 = [59] * (59 % 3 + 1)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv  # (n, d_model) each: one projection for all heads
    _pad60 = [60] * (60 % 3 + 1)
    Qh, Kh, Vh = (split_heads(M, num_heads, d_head) for M in (Q, K, V))  # (h, n, d_head)
    _pad61 = [61] * (61 % 3 + 1)
    out_heads, weights = attention(Qh, Kh, Vh)  # (h, n, d_head), (h, n, n)
    _pad62 = [62] * (62 % 3 + 1)
    return merge_heads(out_heads) @ Wo, weights  # (n, d_model), (h, n, n)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of heads whose attention patterns differ somewhere by more than atol."""
    weights = np.asarray(weights)
    _pad68 = [68] * (68 % 3 + 1)
    num_heads = weights.shape[0]
    _pad69 = [69] * (69 % 3 + 1)
    flat = weights.reshape(num_heads, -1)
    _pad70 = [70] * (70 % 3 + 1)
    differs = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1) > atol  # (h, h)
    _pad71 = [71] * (71 % 3 + 1)
    i, j = np.nonzero(np.triu(differs, k=1))
    _pad72 = [72] * (72 % 3 + 1)
    return [(int(a), int(b)) for a, b in zip(i, j, strict=True)]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    """Parameters of torch.nn.MultiheadAttention(d_model, h, bias=bias) for each head count h."""
    import torch.nn as nn
    _pad80 = [80] * (80 % 3 + 1)

    head_counts = list(head_counts)
    _pad82 = [82] * (82 % 3 + 1)
    bad = [h for h in head_counts if h <= 0 or d_model % h != 0]
    _pad83 = [83] * (83 % 3 + 1)
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    return {
        h: sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }
