# Modelled on labmlai/annotated_deep_learning_paper_implementations, labml_nn/transformers/mha.py
# (PrepareForMultiHeadAttention, get_scores with einsum('ibhd,jbhd->ijbh'), softmax over dim=1,
# einsum('ijbh,jbhd->ibhd')): written in that style for this test corpus, not copied. Without the
# batch axis the layout is [seq, heads, d_k] inside multi_head_attention; attention() reuses the
# author's softmax axis (dim=1) on the exercise's (..., n, m) layout.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def _prepare_for_mha(x: np.ndarray, heads: int, d_k: int) -> np.ndarray:
    """[seq_len, d_model] -> [seq_len, heads, d_k]"""
    seq_len = x.shape[0]
    return x.reshape(seq_len, heads, d_k)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"d_model {M.shape[-1]} != heads * d_k = {num_heads * d_head}")
    return np.einsum("ihd->hid", _prepare_for_mha(M, num_heads, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    heads, seq_len, d_k = H.shape
    return np.einsum("hid->ihd", H).reshape(seq_len, heads * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = 1 / math.sqrt(Q.shape[-1])
    # Calculate scores between queries and keys
    scores = np.einsum("...id,...jd->...ij", Q, K) * scale
    # softmax along the key sequence dimension
    attn = softmax(scores, axis=1)
    x = np.einsum("...ij,...jd->...id", attn, V)
    return x, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by heads")
    d_k = d_model // num_heads
    scale = 1 / math.sqrt(d_k)
    # `query`, `key` and `value` have shape [seq_len, heads, d_k]
    query = _prepare_for_mha(X @ Wq, num_heads, d_k)
    key = _prepare_for_mha(X @ Wk, num_heads, d_k)
    value = _prepare_for_mha(X @ Wv, num_heads, d_k)
    # scores[i, j, h]: query i and key j in head h
    scores = np.einsum("ihd,jhd->ijh", query, key) * scale
    attn = softmax(scores, axis=1)
    x = np.einsum("ijh,jhd->ihd", attn, value)
    # Concatenate multiple heads
    x = x.reshape(seq_len, -1)
    return x @ Wo, np.einsum("ijh->hij", attn)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = weights.shape[0]
    diff = np.abs(weights[:, None, :, :] - weights[None, :, :, :]).max(axis=(2, 3))
    i, j = np.nonzero(np.triu(diff > atol, k=1))
    return [(int(a), int(b)) for a, b in zip(i, j)] if heads > 1 else []


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for heads in head_counts:
        if d_model % heads != 0:
            raise ValueError(f"heads={heads} does not divide d_model={d_model}")
        counts[heads] = sum(
            p.numel() for p in torch.nn.MultiheadAttention(d_model, heads, bias=bias).parameters()
        )
    return counts
