# Modelled on google/flax, flax/linen/attention.py (dot_product_attention_weights: the query
# divided by sqrt(depth) first, einsum '...qhd,...khd->...hqk' with heads after the tokens,
# jax.nn.softmax; DenseGeneral projections to (length, heads, head_dim)): written in that style
# for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # jax.nn.softmax: exp(x - max) / sum, the max held constant
    x_max = np.max(x, axis, keepdims=True)
    unnormalized = np.exp(x - x_max)
    return unnormalized / np.sum(unnormalized, axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # DenseGeneral(features=(num_heads, head_dim)) gives [length, heads, head_dim]
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"Memory dimension ({M.shape[-1]}) must be divisible by number of heads ({num_heads})"
            f" into {d_head} features"
        )
    return np.moveaxis(M.reshape(M.shape[:-1] + (num_heads, d_head)), -2, 0)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # back to [length, heads * head_dim]
    x = np.moveaxis(H, 0, -2)
    return x.reshape(x.shape[:-2] + (-1,))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    depth = Q.shape[-1]
    query = Q / np.sqrt(depth)
    attn_weights = np.einsum("...qd,...kd->...qk", query, K)
    attn_weights = softmax(attn_weights)
    return np.einsum("...qk,...kd->...qd", attn_weights, V), attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    length, qkv_features = X.shape
    if num_heads <= 0 or qkv_features % num_heads != 0:
        raise ValueError(
            f"Memory dimension ({qkv_features}) must be divisible by number of heads ({num_heads})."
        )
    head_dim = qkv_features // num_heads
    # dense(name='query'), dense(name='key'), dense(name='value'): [length, heads, head_dim]
    query = (X @ Wq).reshape(length, num_heads, head_dim)
    key = (X @ Wk).reshape(length, num_heads, head_dim)
    value = (X @ Wv).reshape(length, num_heads, head_dim)
    depth = query.shape[-1]
    query = query / np.sqrt(depth)
    attn_weights = np.einsum("...qhd,...khd->...hqk", query, key)
    attn_weights = softmax(attn_weights)
    x = np.einsum("...hqk,...khd->...qhd", attn_weights, value)
    # DenseGeneral(axis=(-2, -1)) back to qkv_features
    out = x.reshape(length, num_heads * head_dim) @ Wo
    return out, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    diff = np.max(np.abs(weights[:, None] - weights[None, :]), axis=(-2, -1))
    i, j = np.triu_indices(num_heads, k=1)
    return [(int(a), int(b)) for a, b in zip(i, j) if diff[a, b] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    head_counts = list(head_counts)
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"number of heads {h} does not divide {d_model}")
    return {
        h: sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }
