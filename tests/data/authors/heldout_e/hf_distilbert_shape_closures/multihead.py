# Modelled on huggingface/transformers, models/distilbert/modeling_distilbert.py
# (MultiHeadSelfAttention: dim_per_head = dim // n_heads, the `shape` / `unshape` closures with
# view(bs, -1, n_heads, dim_per_head), q = q / math.sqrt(dim_per_head) before
# torch.matmul(q, k.transpose(2, 3)), nn.functional.softmax(scores, dim=-1)) and the
# `sum(p.numel() for p in model.parameters())` habit of HF users: written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """separate heads"""
    return M.reshape(-1, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """group heads"""
    n_heads, _, dim_per_head = H.shape
    return H.transpose(1, 0, 2).reshape(-1, n_heads * dim_per_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dim_per_head = Q.shape[-1]
    q = Q / math.sqrt(dim_per_head)  # (..., q_length, dim_per_head)
    scores = np.matmul(q, K.transpose(-1, -2))  # (..., q_length, k_length)
    weights = softmax(scores, axis=-1)  # (..., q_length, k_length)
    context = np.matmul(weights, V)  # (..., q_length, dim_per_head)
    return context, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    q_length, dim = X.shape
    if dim % num_heads != 0:
        raise ValueError(f"n_heads: {num_heads} must divide dim: {dim} evenly")
    dim_per_head = dim // num_heads

    def shape(x):
        """separate heads"""
        return x.reshape(q_length, num_heads, dim_per_head).transpose(1, 0, 2)

    def unshape(x):
        """group heads"""
        return x.transpose(1, 0, 2).reshape(q_length, num_heads * dim_per_head)

    q = shape(X @ Wq)  # (n_heads, q_length, dim_per_head)
    k = shape(X @ Wk)  # (n_heads, k_length, dim_per_head)
    v = shape(X @ Wv)  # (n_heads, k_length, dim_per_head)

    q = q / math.sqrt(dim_per_head)  # (n_heads, q_length, dim_per_head)
    scores = np.matmul(q, k.transpose(0, 2, 1))  # (n_heads, q_length, k_length)
    weights = softmax(scores, axis=-1)  # (n_heads, q_length, k_length)

    context = np.matmul(weights, v)  # (n_heads, q_length, dim_per_head)
    context = unshape(context)  # (q_length, dim)
    context = context @ Wo  # (q_length, dim)
    return context, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(n_heads)
        for j in range(i + 1, n_heads)
        if np.any(np.abs(weights[i] - weights[j]) > atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_heads in head_counts:
        model = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias)
        counts[n_heads] = sum(p.numel() for p in model.parameters())
    return counts
