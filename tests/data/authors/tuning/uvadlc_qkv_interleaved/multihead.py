# Modelled on phlippe/uvadlc_notebooks, docs/tutorial_notebooks/tutorial6/
# Transformers_and_MHAttention.ipynb (scaled_dot_product(q, k, v, mask=None) and MultiheadAttention
# with one stacked qkv_proj, reshape(B, S, num_heads, 3*head_dim), permute and chunk(3, dim=-1)):
# written in that style for this test corpus, not copied. The student stacks the exercise's
# Wq, Wk, Wv into one qkv matrix to keep the tutorial's forward as it is.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_exp = np.exp(x - x.max(axis=axis, keepdims=True))
    return x_exp / x_exp.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_length, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError("Embedding dimension must be num_heads * head_dim.")
    return M.reshape(seq_length, num_heads, d_head).transpose(1, 0, 2)  # [Head, SeqLen, Dims]


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_length, head_dim = H.shape
    values = H.transpose(1, 0, 2)  # [SeqLen, Head, Dims]
    return values.reshape(seq_length, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    attn_logits = np.matmul(Q, np.swapaxes(K, -2, -1))
    attn_logits = attn_logits / math.sqrt(d_k)
    attention = softmax(attn_logits, axis=-1)
    values = np.matmul(attention, V)
    return values, attention


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_length, embed_dim = X.shape
    if embed_dim % num_heads != 0:
        raise ValueError("Embedding dimension must be 0 modulo number of heads.")
    head_dim = embed_dim // num_heads
    # Stack all weight matrices 1...h together for efficiency
    qkv_proj = np.concatenate([Wq, Wk, Wv], axis=1)
    qkv = X @ qkv_proj

    # Separate Q, K, V from linear output
    qkv = qkv.reshape(seq_length, num_heads, 3 * head_dim)
    qkv = qkv.transpose(1, 0, 2)  # [Head, SeqLen, Dims]
    q, k, v = np.split(qkv, 3, axis=-1)

    # Determine value outputs
    values, attention_weights = attention(q, k, v)
    values = values.transpose(1, 0, 2)  # [SeqLen, Head, Dims]
    values = values.reshape(seq_length, embed_dim)
    o = values @ Wo
    return o, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.abs(weights[i] - weights[j]).max() > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"Embedding dimension {d_model} is not 0 modulo {num_heads} heads")
        counts[num_heads] = sum(
            p.numel() for p in nn.MultiheadAttention(d_model, num_heads, bias=bias).parameters()
        )
    return counts
