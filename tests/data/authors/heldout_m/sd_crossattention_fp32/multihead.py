# Modelled on CompVis/stable-diffusion, `ldm/modules/attention.py` (CrossAttention:
# `__init__(query_dim, context_dim=None, heads=8, dim_head=64, dropout=0.)`,
# `self.scale = dim_head ** -0.5`, to_q/to_k/to_v `bias=False`, `to_out = Sequential(Linear(inner_dim,
# query_dim), Dropout)`, `rearrange(t, 'b n (h d) -> (b h) n d')`,
# `einsum('b i d, b j d -> b i j', q, k) * self.scale`, `sim.softmax(dim=-1)`): written in that
# style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def softmax(x, axis=-1):
    x = np.asarray(x)
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    # rearrange(t, 'n (h d) -> h n d', h=h)
    n, hd = M.shape
    if hd != num_heads * d_head:
        raise ValueError(f"expected {num_heads} * {d_head} features, got {hd}")
    return M.reshape(n, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H):
    # rearrange(out, 'h n d -> n (h d)')
    h, n, d = H.shape
    return H.transpose(1, 0, 2).reshape(n, h * d)


def attention(Q, K, V):
    # everything in front of (n, d) is folded into one '(b h)' axis, as in CrossAttention.forward
    lead = Q.shape[:-2]
    q = Q.reshape(-1, *Q.shape[-2:])
    k = K.reshape(-1, *K.shape[-2:])
    v = V.reshape(-1, *V.shape[-2:])
    scale = q.shape[-1] ** -0.5
    sim = np.einsum('bid,bjd->bij', q, k) * scale
    attn = softmax(sim, axis=-1)
    out = np.einsum('bij,bjd->bid', attn, v)
    return out.reshape(*lead, *out.shape[-2:]), attn.reshape(*lead, *attn.shape[-2:])


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads, context=None, dim_head=64):
    query_dim = X.shape[-1]
    h = num_heads
    if query_dim % h:
        raise ValueError(f"query_dim {query_dim} is not divisible by heads {h}")
    context = default(context, X)
    scale = dim_head ** -0.5

    q = X @ Wq
    k = context @ Wk
    v = context @ Wv
    q, k, v = (split_heads(t, h, query_dim // h) for t in (q, k, v))

    sim = np.einsum('hid,hjd->hij', q, k) * scale
    attn = softmax(sim, axis=-1)
    out = np.einsum('hij,hjd->hid', attn, v)
    out = merge_heads(out)
    return out @ Wo, attn


def distinct_head_pairs(weights, atol=1e-6):
    h = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(h, h, -1).max(-1)
    return [(i, j) for i in range(h) for j in range(i + 1, h) if diff[i, j] > atol]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for heads in head_counts:
        dim_head = d_model // heads
        inner_dim = dim_head * heads
        to_qkv = 3 * d_model * inner_dim          # to_q, to_k, to_v: bias=False
        to_out = inner_dim * d_model + d_model    # nn.Linear(inner_dim, query_dim)
        counts[heads] = to_qkv + to_out
    return counts
