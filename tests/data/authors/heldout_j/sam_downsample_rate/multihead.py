# Modelled on facebookresearch/segment-anything, segment_anything/modeling/transformer.py
# (Attention: "An attention layer that allows for downscaling the size of the embedding after
# projection to queries, keys, and values"; internal_dim = embedding_dim // downsample_rate,
# used with downsample_rate=2 in the TwoWayAttentionBlock's cross attention; _separate_heads
# with `c // num_heads`; `attn = q @ k.permute(0, 1, 3, 2)`; attn / math.sqrt(c_per_head);
# _recombine_heads): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

downsample_rate = 2


def softmax(x, axis=-1):
    x = x - np.max(x, axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / ex.sum(axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    # _separate_heads
    n, c = M.shape
    x = M.reshape(n, num_heads, c // num_heads)
    return x.transpose(1, 0, 2)  # H x N_tokens x C_per_head


def merge_heads(H):
    # _recombine_heads
    n_heads, n_tokens, c_per_head = H.shape
    x = H.transpose(1, 0, 2)
    return x.reshape(n_tokens, n_heads * c_per_head)  # N_tokens x C


def attention(Q, K, V):
    # B x N_heads x N_tokens x C_per_head
    _, _, _, c_per_head = Q.shape
    attn = Q @ K.transpose(0, 1, 3, 2)  # B x N_heads x N_tokens x N_tokens
    attn = attn / math.sqrt(c_per_head)
    attn = softmax(attn, axis=-1)
    out = attn @ V
    return out, attn


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    embedding_dim = X.shape[-1]
    if embedding_dim % num_heads != 0:
        raise ValueError(f"num_heads ({num_heads}) must divide embedding_dim ({embedding_dim}).")
    internal_dim = embedding_dim // downsample_rate
    c_per_head = max(internal_dim // num_heads, 1)
    internal_dim = c_per_head * num_heads

    # Input projections (down to internal_dim)
    q = X @ Wq[:, :internal_dim]
    k = X @ Wk[:, :internal_dim]
    v = X @ Wv[:, :internal_dim]

    # Separate into heads, add the batch axis SAM always has
    q = split_heads(q, num_heads, c_per_head)[None]
    k = split_heads(k, num_heads, c_per_head)[None]
    v = split_heads(v, num_heads, c_per_head)[None]

    out, attn = attention(q, k, v)
    out = merge_heads(out[0])
    out = out @ Wo[:internal_dim, :]  # back up to embedding_dim
    return out, attn[0]


def distinct_head_pairs(weights, atol=1e-6):
    h = weights.shape[0]
    return [(i, j) for i in range(h) for j in range(i + 1, h)
            if (np.abs(weights[i] - weights[j]) > atol).any()]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"num_heads={h} must divide embedding_dim={d_model}")
        mha = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in mha.parameters())
    return counts
