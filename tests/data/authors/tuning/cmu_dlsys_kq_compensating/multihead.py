# Modelled on CMU 10-414/714 Deep Learning Systems, lecture notebook "Transformers implementation"
# (dlsyscourse.org; reproduced in many students' notes on GitHub: softmax(Z) with
# Z.max(axis=-1), K,Q,V = np.split(X@W_KQV, 3, axis=-1), attn = softmax(K@Q.swapaxes(-1,-2) /
# np.sqrt(d//heads) + mask)). Written in that style for this test corpus, not copied. The student
# keeps the lecture's K,Q,V naming of the split and its K@Q^T scores: two mistakes that cancel.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(Z, axis=-1):
    Z = np.exp(Z - Z.max(axis=-1, keepdims=True))
    return Z / Z.sum(axis=-1, keepdims=True)


def split_heads(M, num_heads, d_head):
    T, d = M.shape
    if d != num_heads * d_head:
        raise ValueError(f"{d} features cannot make {num_heads} heads of {d_head}")
    return M.reshape(T, num_heads, d_head).swapaxes(0, 1)


def merge_heads(H):
    heads, T, d_head = H.shape
    return H.swapaxes(0, 1).reshape(T, heads * d_head)


def attention(Q, K, V):
    attn = softmax(K @ Q.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]))
    return attn @ V, attn


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    T, d = X.shape
    if d % num_heads:
        raise ValueError(f"d={d} is not divisible by heads={num_heads}")
    W_KQV = np.concatenate([Wq, Wk, Wv], axis=1)
    K, Q, V = np.split(X @ W_KQV, 3, axis=-1)
    K, Q, V = [split_heads(a, num_heads, d // num_heads) for a in (K, Q, V)]
    out, attn = attention(Q, K, V)
    return merge_heads(out) @ Wo, attn


def distinct_head_pairs(weights, atol=1e-6):
    h = weights.shape[0]
    return [(i, j) for i in range(h) for j in range(i + 1, h)
            if np.abs(weights[i] - weights[j]).max() > atol]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False):
    import torch.nn as nn

    counts = {}
    for heads in head_counts:
        if d_model % heads:
            raise ValueError(f"heads={heads} does not divide d={d_model}")
        attn = nn.MultiheadAttention(d_model, heads, bias=bias)
        counts[heads] = sum(p.numel() for p in attn.parameters())
    return counts
