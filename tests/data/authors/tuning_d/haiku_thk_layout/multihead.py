# Modelled on google-deepmind/dm-haiku, haiku/_src/attention.py (MultiHeadAttention: the
# [T, H, K] layout of _linear_projection, einsum("...thd,...Thd->...htT"), attn_logits /
# np.sqrt(key_size), jnp.reshape(attn, (*attn.shape[:-2], -1))): written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # jax.nn.softmax
    unnormalized = np.exp(x - np.max(x, axis, keepdims=True))
    return unnormalized / np.sum(unnormalized, axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # _linear_projection: y.reshape((*leading_dims, self.num_heads, head_size))  # [T, H, K]
    *leading_dims, _ = M.shape
    return M.reshape((*leading_dims, num_heads, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # attn = jnp.reshape(attn, (*attn.shape[:-2], -1))  # [T', H*V]
    return np.reshape(H, (*H.shape[:-2], -1))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    key_size = K.shape[-1]
    attn_logits = np.einsum("...td,...Td->...tT", Q, K)
    attn_logits = attn_logits / np.sqrt(key_size).astype(K.dtype)
    attn_weights = softmax(attn_logits)
    attn = np.einsum("...tT,...Td->...td", attn_weights, V)
    return attn, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    model_size = X.shape[-1]
    if model_size % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide model_size={model_size}")
    key_size = model_size // num_heads

    query_heads = split_heads(X @ Wq, num_heads, key_size)  # [T', H, K]
    key_heads = split_heads(X @ Wk, num_heads, key_size)  # [T, H, K]
    value_heads = split_heads(X @ Wv, num_heads, key_size)  # [T, H, V]

    attn_logits = np.einsum("...thd,...Thd->...htT", query_heads, key_heads)
    attn_logits = attn_logits / np.sqrt(key_size).astype(X.dtype)
    attn_weights = softmax(attn_logits)  # [H, T', T]

    attn = np.einsum("...htT,...Thd->...thd", attn_weights, value_heads)
    attn = np.reshape(attn, (*attn.shape[:-2], -1))  # [T', H*V]
    return attn @ Wo, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"num_heads={num_heads} does not divide model_size={d_model}")
        key_size = d_model // num_heads
        # query, key, value: hk.Linear(num_heads * key_size); final: hk.Linear(model_size)
        w = 3 * d_model * num_heads * key_size + num_heads * key_size * d_model
        b = 3 * num_heads * key_size + d_model if bias else 0
        counts[num_heads] = w + b
    return counts
