# Modelled on openai/gpt-oss, gpt_oss/torch/model.py (sdpa(Q, K, V, S, sm_scale,
# sliding_window): the per-head sink logits S concatenated to QK as one more column, softmax,
# then W[..., :-1] dropped; AttentionBlock with `self.sinks = torch.nn.Parameter(torch.empty(
# num_attention_heads))`, sm_scale = 1 / sqrt(head_dim)): written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    x_max = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    n_ctx = M.shape[0]
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"expected {num_heads} * {d_head} features, got {M.shape[-1]}")
    # [n_ctx, n_heads, d_head] -> [n_heads, n_ctx, d_head]
    return M.reshape(n_ctx, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_heads, n_ctx, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n_ctx, n_heads * d_head)


def attention(Q, K, V, S=None, sm_scale=None):
    # Q [..., n, d]  K [..., m, d]  V [..., m, dv]  S [...] one sink logit per head (optional)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(Q.shape[-1])
    QK = np.matmul(Q, np.swapaxes(K, -1, -2)) * sm_scale
    if S is not None:
        # the sink: one more "key" per head that soaks up probability, then dropped
        S = np.broadcast_to(np.asarray(S, dtype=QK.dtype)[..., None, None], QK.shape[:-1] + (1,))
        QK = np.concatenate([QK, S], axis=-1)
        W = softmax(QK, axis=-1)[..., :-1]
    else:
        W = softmax(QK, axis=-1)
    attn = np.matmul(W, V)
    return attn, W


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    n_ctx, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    head_dim = d_model // num_heads
    sm_scale = 1.0 / math.sqrt(head_dim)
    # sinks start at zero before training (gpt-oss loads them from the checkpoint)
    sinks = np.zeros(num_heads, dtype=X.dtype)

    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)
    t, W = attention(q, k, v, sinks, sm_scale)
    t = merge_heads(t)
    return t @ Wo, W


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    pairs = []
    for i in range(n_heads):
        for j in range(i + 1, n_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_attention_heads in head_counts:
        if d_model % num_attention_heads != 0:
            raise ValueError(f"num_heads={num_attention_heads} does not divide d_model={d_model}")
        head_dim = d_model // num_attention_heads
        qkv_dim = head_dim * (num_attention_heads + 2 * num_attention_heads)
        total = d_model * qkv_dim + num_attention_heads * head_dim * d_model  # qkv + out
        if bias:
            total += qkv_dim + d_model
        total += num_attention_heads  # sinks
        counts[num_attention_heads] = total
    return counts
