# Modelled on Christopher M. Bishop & Hugh Bishop, "Deep Learning: Foundations and Concepts"
# (Springer, 2024), chapter 12 "Transformers": eq. (12.5) softmax written as exp(a_nm) / sum_m'
# exp(a_nm'), eqs. (12.14)-(12.15) Y = Softmax[Q K^T / sqrt(D_k)] V with Q = X W^(q) and the
# rows of X the tokens, eqs. (12.17)-(12.19) H_h = Attention(Q_h, K_h, V_h),
# Y(X) = Concat[H_1, ..., H_H] W^(o), "D_v = D/H", and Algorithm 12.1/12.2 written out with
# explicit sums: written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    # eq. (12.5), one vector a at a time, shifted by its largest element first
    def _softmax_vector(a):
        a_max = max(a)
        e = [math.exp(a_m - a_max) for a_m in a]
        Z = math.fsum(e)
        return np.array([e_m / Z for e_m in e])

    x = np.asarray(x, dtype=np.float64)
    return np.apply_along_axis(_softmax_vector, axis, x)


def split_heads(M, num_heads, d_head):
    # Q_h is the h-th group of D_k consecutive columns of Q (eq. 12.17)
    N, D = M.shape
    if D != num_heads * d_head:
        raise ValueError(f"D = {D} is not H * D_k = {num_heads} * {d_head}")
    Q_h = np.empty((num_heads, N, d_head))
    for h in range(num_heads):
        for n in range(N):
            for k in range(d_head):
                Q_h[h, n, k] = M[n, h * d_head + k]
    return Q_h


def merge_heads(H):
    # Concat[H_1, ..., H_H] (eq. 12.19): the heads side by side along the feature dimension
    num_heads, N, D_v = H.shape
    Y = np.empty((N, num_heads * D_v))
    for h in range(num_heads):
        Y[:, h * D_v:(h + 1) * D_v] = H[h]
    return Y


def attention(Q, K, V):
    # Y = Softmax[Q K^T / sqrt(D_k)] V, the softmax applied to each row (eq. 12.15)
    D_k = Q.shape[-1]
    A = np.einsum('...nk,...mk->...nm', Q, K) / math.sqrt(D_k)
    A = softmax(A, axis=-1)
    Y = np.einsum('...nm,...mv->...nv', A, V)
    return Y, A


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    N, D = X.shape
    H = num_heads
    if D % H != 0:
        raise ValueError(f"D = {D} must be a multiple of the number of heads H = {H}")
    D_k = D // H
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    Y_heads, A_heads = attention(split_heads(Q, H, D_k), split_heads(K, H, D_k),
                                 split_heads(V, H, D_k))
    Y = merge_heads(Y_heads) @ Wo
    return Y, A_heads


def distinct_head_pairs(weights, atol=1e-6):
    H = weights.shape[0]
    pairs = []
    for h in range(H):
        for g in range(h + 1, H):
            largest = 0.0
            for n in range(weights.shape[1]):
                for m in range(weights.shape[2]):
                    largest = max(largest, abs(float(weights[h, n, m]) - float(weights[g, n, m])))
            if largest > atol:
                pairs.append((h, g))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    # per head W_h^(q), W_h^(k) of D x D_k and W_h^(v) of D x D_v, then W^(o) of H D_v x D
    D = d_model
    counts = {}
    for H in head_counts:
        if D % H != 0:
            raise ValueError(f"H = {H} does not divide D = {D}")
        D_k = D_v = D // H
        n = H * (D * D_k + D * D_k + D * D_v) + H * D_v * D
        if bias:
            n += H * (D_k + D_k + D_v) + D
        counts[H] = n
    return counts
