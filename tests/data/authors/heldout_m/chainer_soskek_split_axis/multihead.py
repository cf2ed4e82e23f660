# Modelled on soskek/attention_is_all_you_need (Chainer), `net.py` (MultiHeadAttention:
# `F.split_axis(Q, self.h, axis=1)` concatenated on the batch axis, `F.matmul(..., transb=True)`
# times `self.scale_score = 1. / (n_units // h) ** 0.5`, `F.softmax(batch_A, axis=2)`), and
# Chainer's own `F.softmax(x, axis=1)` default: written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

xp = np  # chainer.backend.get_array_module(x) on the CPU


def softmax(x, axis=1):
    # same signature as chainer.functions.softmax(x, axis=1)
    x = xp.asarray(x)
    y = x - x.max(axis=axis, keepdims=True)
    y = xp.exp(y)
    return y / y.sum(axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    # F.split_axis(Q, h, axis=1) -> one block of units per head
    return xp.stack(xp.split(M, num_heads, axis=1), axis=0)


def merge_heads(H):
    # F.concat(F.split_axis(batch_C, h, axis=0), axis=1)
    return xp.concatenate(list(H), axis=1)


def attention(Q, K, V):
    scale_score = 1.0 / Q.shape[-1] ** 0.5
    # batch_A = F.matmul(batch_Q, batch_K, transb=True) * self.scale_score
    batch_A = xp.matmul(Q, xp.swapaxes(K, -1, -2)) * scale_score
    batch_A = softmax(batch_A, axis=2)
    batch_C = xp.matmul(batch_A, V)
    return batch_C, batch_A


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    n_units = X.shape[1]
    h = num_heads
    if n_units % h != 0:
        raise ValueError("n_units ({}) must be divisible by h ({})".format(n_units, h))
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    batch_Q = split_heads(Q, h, n_units // h)
    batch_K = split_heads(K, h, n_units // h)
    batch_V = split_heads(V, h, n_units // h)
    batch_C, batch_A = attention(batch_Q, batch_K, batch_V)
    C = merge_heads(batch_C)
    return C @ Wo, batch_A


def distinct_head_pairs(weights, atol=1e-6):
    h = weights.shape[0]
    pairs = []
    for i in range(h):
        for j in range(i + 1, h):
            if xp.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    # W_QKV = ConvolutionSentence(n_units, n_units * 3, nobias=True) unless bias,
    # finishing_linear_layer = ConvolutionSentence(n_units, n_units) (with its bias)
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError("n_units ({}) must be divisible by h ({})".format(d_model, h))
        W_QKV = d_model * d_model * 3 + (d_model * 3 if bias else 0)
        W_O = d_model * d_model + d_model
        counts[h] = W_QKV + W_O
    return counts
