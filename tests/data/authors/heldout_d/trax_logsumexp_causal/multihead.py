# Modelled on the Coursera NLP specialization, course 4 week 2 (trax): DotProductAttention(query,
# key, value, mask) with dots = matmul(query, swapaxes(key, -1, -2)) / sqrt(depth),
# where(mask, dots, -1e9), exp(dots - logsumexp(dots, axis=-1, keepdims=True)), and the causal
# mask of CausalAttention (tril(ones((1, mask_size, mask_size)))) built in
# dot_product_self_attention; compute_attention_heads_closure / compute_attention_output_closure:
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # exp(x - logsumexp(x)), the stable way trax.math.logsumexp does it
    m = np.max(x, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - lse)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # compute_attention_heads: (batch, seqlen, n_heads * d_head) -> (batch * n_heads, seqlen, d_head)
    batch_size = 1
    seqlen = M.shape[0]
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("x must have n_heads * d_head features")
    x = np.reshape(M, (batch_size, seqlen, num_heads, d_head))
    x = np.transpose(x, (0, 2, 1, 3))
    return np.reshape(x, (-1, seqlen, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # compute_attention_output: (batch * n_heads, seqlen, d_head) -> (batch, seqlen, n_heads * d_head)
    n_heads, seqlen, d_head = H.shape
    x = np.reshape(H, (-1, n_heads, seqlen, d_head))
    x = np.transpose(x, (0, 2, 1, 3))
    return np.reshape(x, (seqlen, n_heads * d_head))


def logsumexp(x, axis=-1, keepdims=True):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None) -> tuple[np.ndarray, np.ndarray]:
    depth = Q.shape[-1]
    dots = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(depth)
    if mask is not None:
        dots = np.where(mask, dots, np.full_like(dots, -1e9))
    dots = np.exp(dots - logsumexp(dots, axis=-1, keepdims=True))
    return np.matmul(dots, V), dots


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_feature = X.shape[-1]
    if d_feature % num_heads != 0:
        raise ValueError(f"d_feature ({d_feature}) must be divisible by n_heads ({num_heads})")
    d_head = d_feature // num_heads
    q = split_heads(X @ Wq, num_heads, d_head)
    k = split_heads(X @ Wk, num_heads, d_head)
    v = split_heads(X @ Wv, num_heads, d_head)
    # dot_product_self_attention: causal mask, broadcast over every head
    mask_size = q.shape[-2]
    mask = np.tril(np.ones((1, mask_size, mask_size), dtype=np.bool_), k=0)
    out, weights = attention(q, k, v, mask)
    return merge_heads(out) @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    pairs = []
    for i in range(n_heads):
        for j in range(i + 1, n_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for n_heads in head_counts:
        if d_model % n_heads != 0:
            raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
        layer = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias)
        counts[n_heads] = sum(p.numel() for p in layer.parameters())
    return counts
