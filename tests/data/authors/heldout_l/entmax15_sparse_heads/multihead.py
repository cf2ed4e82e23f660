# Modelled on deep-spin/entmax, entmax/activations.py (Peters, Niculae & Martins: `entmax15` /
# Tsallis15Function with `_tsallis_threshold_and_support`, `_make_ix_like`, `X = X / 2  # divide
# by 2 to solve actual Tsallis`, `Y = torch.clamp(X - tau_star, min=0) ** 2`) and the paper it
# was built for, Correia, Niculae & Martins, "Adaptively Sparse Transformers" (entmax in place of
# softmax in every attention head, one learned alpha per head): written in that style for this
# test corpus, not copied. alpha is fixed at 1.5 here (entmax15).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """
    softmax: the alpha = 1 member of the entmax family
    Parameters:
        x (ndarray): any shape
        axis: dimension along which to apply softmax
    Returns:
        output (ndarray): same shape as x
    """
    x = np.asarray(x)
    max_val = x.max(axis=axis, keepdims=True)
    x = x - max_val  # same numerical stability trick as for entmax
    ex = np.exp(x)
    return ex / ex.sum(axis=axis, keepdims=True)


def _make_ix_like(X, dim=0):
    d = X.shape[dim]
    rho = np.arange(1, d + 1, dtype=X.dtype)
    view = [1] * X.ndim
    view[0] = -1
    return np.swapaxes(rho.reshape(view), 0, dim)


def _tsallis_threshold_and_support(X, dim=0):
    Xsrt = -np.sort(-X, axis=dim)  # descending

    rho = _make_ix_like(X, dim)
    mean = np.cumsum(Xsrt, axis=dim) / rho
    mean_sq = np.cumsum(Xsrt ** 2, axis=dim) / rho
    ss = rho * (mean_sq - mean ** 2)
    delta = (1 - ss) / rho

    delta_nz = np.clip(delta, 0, None)
    tau = mean - np.sqrt(delta_nz)

    support_size = np.expand_dims((tau <= Xsrt).sum(axis=dim), dim)
    tau_star = np.take_along_axis(tau, support_size - 1, axis=dim)
    return tau_star, support_size


def entmax15(X, dim=-1):
    """
    1.5-entmax: normalizing sparse transform (a la softmax)
    Parameters:
        X (ndarray): any shape
        dim: dimension along which to apply 1.5-entmax
    Returns:
        output (ndarray): same shape as X, sums to 1 along dim, with exact zeros
    """
    X = np.asarray(X)
    max_val = X.max(axis=dim, keepdims=True)
    X = X - max_val  # same numerical stability trick as for softmax
    X = X / 2  # divide by 2 to solve actual Tsallis

    tau_star, _ = _tsallis_threshold_and_support(X, dim)

    Y = np.clip(X - tau_star, 0, None) ** 2
    return Y


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (n, heads * dim_per_head) -> (heads, n, dim_per_head); dim_per_head follows from M
    n = M.shape[0]
    return M.reshape(n, num_heads, -1).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    heads, n, dim_per_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, heads * dim_per_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / math.sqrt(d_k)
    # Adaptively Sparse Transformers: every head normalises its scores with entmax
    # instead of softmax, so irrelevant keys get exactly zero weight
    p_attn = entmax15(scores, dim=-1)
    return np.matmul(p_attn, V), p_attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
    dim_per_head = d_model // num_heads
    query = split_heads(X @ Wq, num_heads, dim_per_head)
    key = split_heads(X @ Wk, num_heads, dim_per_head)
    value = split_heads(X @ Wv, num_heads, dim_per_head)
    context, attn = attention(query, key, value)
    return merge_heads(context) @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    weights = np.asarray(weights)
    heads = weights.shape[0]
    out = []
    for i in range(heads):
        for j in range(i + 1, heads):
            if np.abs(weights[i] - weights[j]).max() > atol:
                out.append((i, j))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    head_counts = list(head_counts)
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"num_heads {h} does not divide d_model {d_model}")
    counts = {}
    for h in head_counts:
        layer = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        n_params = sum(p.numel() for p in layer.parameters())
        # plus the learned alpha of each head (Adaptively Sparse Transformers)
        counts[h] = n_params + h
    return counts
