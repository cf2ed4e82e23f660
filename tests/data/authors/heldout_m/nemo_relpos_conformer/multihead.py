# Modelled on NVIDIA/NeMo, `nemo/collections/asr/parts/submodules/multi_head_attention.py`
# (MultiHeadAttention: `assert n_feat % n_head == 0`, `self.d_k = n_feat // n_head`,
# `self.s_d_k = math.sqrt(self.d_k)`, `forward_qkv` with `.view(n_batch, -1, self.h, self.d_k)`
# and `.transpose(1, 2)`, `forward_attention` with `masked_fill(mask, -INF_VAL)` and
# `INF_VAL = 10000.0`; RelPositionMultiHeadAttention: `linear_pos` without bias, `pos_bias_u`
# and `pos_bias_v` of shape (h, d_k)): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

INF_VAL = 10000.0


def softmax(x, axis=-1):
    x = np.asarray(x)
    x_max = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"n_feat {M.shape[-1]} != n_head {num_heads} * d_k {d_head}")
    n_batch = 1
    q = M.reshape(n_batch, -1, num_heads, d_head).transpose(0, 2, 1, 3)
    return q[0]


def merge_heads(H):
    n_head, time, d_k = H.shape
    x = H[None].transpose(0, 2, 1, 3).reshape(1, -1, n_head * d_k)
    return x[0]


def attention(Q, K, V, mask=None):
    s_d_k = math.sqrt(Q.shape[-1])
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / s_d_k
    if mask is not None:
        scores = np.where(mask, -INF_VAL, scores)
    attn = softmax(scores, axis=-1)
    if mask is not None:
        attn = np.where(mask, 0.0, attn)
    x = np.matmul(attn, V)
    return x, attn


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    n_feat = X.shape[-1]
    assert n_feat % num_heads == 0
    d_k = n_feat // num_heads
    h = num_heads
    # forward_qkv
    q = split_heads(X @ Wq, h, d_k)
    k = split_heads(X @ Wk, h, d_k)
    v = split_heads(X @ Wv, h, d_k)
    # pos_bias_u / pos_bias_v start at zero (nn.init.zeros_), so they are left out here
    x, attn = attention(q, k, v, mask=None)
    return merge_heads(x) @ Wo, attn


def distinct_head_pairs(weights, atol=1e-6):
    n_head = weights.shape[0]
    diff = np.abs(weights[:, None, :, :] - weights[None, :, :, :]).max(axis=(-2, -1))
    return [(i, j) for i in range(n_head) for j in range(i + 1, n_head) if diff[i, j] > atol]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    import torch

    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"n_feat {d_model} is not divisible by n_head {n_head}")
        mha = torch.nn.MultiheadAttention(d_model, n_head, bias=bias)
        n = sum(p.numel() for p in mha.parameters())
        # RelPositionMultiHeadAttention: linear_pos (bias=False) + pos_bias_u + pos_bias_v
        n += d_model * d_model + 2 * n_head * (d_model // n_head)
        counts[n_head] = n
    return counts
