# Modelled on ajhalthor/Transformer-Neural-Network, Self_Attention_for_Transformer_Neural_Networks.ipynb
# (CodeEmporium's NumPy walk-through: softmax(x) = (np.exp(x).T / np.sum(np.exp(x), axis=-1)).T,
# scaled_dot_product_attention(q, k, v, mask=None) with np.matmul(q, k.T) / math.sqrt(d_k)) and
# Mutlihead_Attention.ipynb (reshape + permute per head): written in that style for this test
# corpus, not copied. multi_head_attention loops over heads so every attention call is 2-D.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    return (np.exp(x).T / np.sum(np.exp(x), axis=-1)).T


def split_heads(M, num_heads, d_head):
    sequence_length, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError("d_model must equal num_heads * head_dim")
    return M.reshape(sequence_length, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H):
    num_heads, sequence_length, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(sequence_length, num_heads * head_dim)


def attention(Q, K, V):
    d_k = Q.shape[-1]
    scaled = np.matmul(Q, K.T) / math.sqrt(d_k)
    attention = softmax(scaled)
    out = np.matmul(attention, V)
    return out, attention


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    sequence_length, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    head_dim = d_model // num_heads
    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)
    values, attentions = [], []
    for h in range(num_heads):
        values_h, attention_h = attention(q[h], k[h], v[h])
        values.append(values_h)
        attentions.append(attention_h)
    values = merge_heads(np.array(values))
    out = values @ Wo
    return out, np.array(attentions)


def distinct_head_pairs(weights, atol=1e-6):
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False):
    import torch.nn as nn

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        layer = nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in layer.parameters())
    return counts
