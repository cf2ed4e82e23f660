# Modelled on tspeterkim/flash-attention-minimal (flash.cu: tiles of Bc = Br = 32, Tc = ceil(N / Bc),
# `softmax_scale = 1.0 / sqrt(d)`, running row_m / row_l with row_m_new = max(row_m_prev, row_m)
# and row_l_new = exp(row_m_prev - row_m_new) * row_l_prev + exp(row_m - row_m_new) * row_l, O
# rescaled tile by tile; the backward kernel's `Pij = diag(li)^-1 * exp(Sij - mi)` to get P back
# from l and m; bench.py's `manual_attn` and `torch.allclose(..., rtol=0, atol=...)` sanity
# checks): written in that style for this test corpus, not copied. Loops over tiles and heads
# instead of CUDA threads.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

Bc = 32  # key/value tile
Br = 32  # query tile


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Online softmax: one pass over tiles of Bc entries keeps the running max m and sum l."""
    x = np.moveaxis(np.asarray(x), axis, -1)
    N = x.shape[-1]
    Tc = math.ceil(N / Bc)
    m = np.full(x.shape[:-1] + (1,), -np.inf, dtype=x.dtype)
    l = np.zeros(x.shape[:-1] + (1,), dtype=x.dtype)
    for j in range(Tc):
        xj = x[..., j * Bc:(j + 1) * Bc]
        row_m = xj.max(axis=-1, keepdims=True)
        row_m_new = np.maximum(m, row_m)
        l = np.exp(m - row_m_new) * l + np.exp(xj - row_m_new).sum(axis=-1, keepdims=True)
        m = row_m_new
    p = np.exp(x - m) / l
    return np.moveaxis(p, -1, axis)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    N, D = M.shape
    if D != num_heads * d_head:
        raise ValueError(f"last dim is {D}, but nh * d = {num_heads} * {d_head} = {num_heads * d_head}")
    out = np.empty((num_heads, N, d_head), dtype=M.dtype)
    for by in range(num_heads):  # one block per head, as grid_dim(B, nh)
        out[by] = M[:, by * d_head:(by + 1) * d_head]
    return out


def merge_heads(H: np.ndarray) -> np.ndarray:
    nh, N, d = H.shape
    out = np.empty((N, nh * d), dtype=H.dtype)
    for by in range(nh):
        out[:, by * d:(by + 1) * d] = H[by]
    return out


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward kernel of flash attention, vectorised over the leading (batch, head) axes."""
    N, d = Q.shape[-2], Q.shape[-1]
    M = K.shape[-2]
    dtype = np.result_type(Q, K, V, np.float32)
    Tc = math.ceil(M / Bc)
    Tr = math.ceil(N / Br)
    softmax_scale = 1.0 / math.sqrt(d)

    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    O = np.zeros(lead + (N, V.shape[-1]), dtype=dtype)
    l = np.zeros(lead + (N, 1), dtype=dtype)
    m = np.full(lead + (N, 1), -np.inf, dtype=dtype)

    for j in range(Tc):
        Kj = K[..., j * Bc:(j + 1) * Bc, :]
        Vj = V[..., j * Bc:(j + 1) * Bc, :]
        for i in range(Tr):
            rows = slice(i * Br, (i + 1) * Br)
            Qi = Q[..., rows, :]
            row_m_prev = m[..., rows, :]
            row_l_prev = l[..., rows, :]

            # S = QK^T * scale, row_m = rowmax(S)
            S = (Qi @ np.swapaxes(Kj, -1, -2)) * softmax_scale
            row_m = S.max(axis=-1, keepdims=True)

            # P = exp(S - row_m), row_l = rowsum(P)
            P = np.exp(S - row_m)
            row_l = P.sum(axis=-1, keepdims=True)

            # Compute new m and l
            row_m_new = np.maximum(row_m_prev, row_m)
            row_l_new = np.exp(row_m_prev - row_m_new) * row_l_prev + np.exp(row_m - row_m_new) * row_l

            # Write O, l, m
            O[..., rows, :] = (1 / row_l_new) * (
                row_l_prev * np.exp(row_m_prev - row_m_new) * O[..., rows, :]
                + np.exp(row_m - row_m_new) * (P @ Vj)
            )
            m[..., rows, :] = row_m_new
            l[..., rows, :] = row_l_new

    # Pij = diag(li)^-1 * exp(Sij - mi), as the backward kernel recomputes it
    weights = np.empty(lead + (N, M), dtype=dtype)
    for j in range(Tc):
        cols = slice(j * Bc, (j + 1) * Bc)
        S = (Q @ np.swapaxes(K[..., cols, :], -1, -2)) * softmax_scale
        weights[..., cols] = np.exp(S - m) / l
    return O, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    N, C = X.shape
    if num_heads <= 0 or C % num_heads != 0:
        raise ValueError(f"n_embd={C} must be a multiple of n_head={num_heads}")
    d = C // num_heads
    q = split_heads(X @ Wq, num_heads, d)
    k = split_heads(X @ Wk, num_heads, d)
    v = split_heads(X @ Wv, num_heads, d)
    y, att = attention(q, k, v)
    return merge_heads(y) @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nh = weights.shape[0]
    pairs = []
    for a in range(nh):
        for b in range(a + 1, nh):
            # allclose with rtol=0: every entry within atol
            if not np.allclose(weights[a], weights[b], rtol=0, atol=atol):
                pairs.append((a, b))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    head_counts = list(head_counts)
    for n_head in head_counts:
        if n_head <= 0 or d_model % n_head != 0:
            raise ValueError(f"n_head={n_head} does not divide n_embd={d_model}")
    return {
        n_head: sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, n_head, bias=bias).parameters())
        for n_head in head_counts
    }
