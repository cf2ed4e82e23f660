# Modelled on lucidrains/x-transformers, x_transformers/attend.py and x_transformers.py
# (Attend.forward: scale = default(self.scale, q.shape[-1] ** -0.5), q = q * scale,
# einsum("b h i d, b h j d -> b h i j"), sim.softmax(dim=-1),
# einsum("b h i j, b h j d -> b h i d"); Attention: rearrange 'b n (h d) -> b h n d' and back,
# to_q / to_k / to_v without bias; helpers exists / default) and the same author's
# lucidrains/vit-pytorch (to_qkv without bias, to_out = nn.Linear(inner_dim, dim) with one):
# written in that style for this test corpus, not copied. The student uses NumPy einsum in
# place of einops.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    x = np.exp(x)
    return x / x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # rearrange(t, 'n (h d) -> h n d', h = h)
    n, hd = M.shape
    if hd != num_heads * d_head:
        raise ValueError(f"cannot split {hd} features into {num_heads} heads of {d_head}")
    return M.reshape(n, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # rearrange(out, 'h n d -> n (h d)')
    h, n, d = H.shape
    return H.transpose(1, 0, 2).reshape(n, h * d)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale=None) -> tuple[np.ndarray, np.ndarray]:
    scale = default(scale, Q.shape[-1] ** -0.5)

    q = Q * scale

    # similarity

    sim = np.einsum("bhid,bhjd->bhij", q, K)

    # attention

    attn = softmax(sim, axis=-1)

    # aggregate values

    out = np.einsum("bhij,bhjd->bhid", attn, V)

    return out, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    h = num_heads
    dim_head = X.shape[-1] // h

    q, k, v = (X @ Wq), (X @ Wk), (X @ Wv)
    q, k, v = map(lambda t: split_heads(t, h, dim_head), (q, k, v))

    # attend with a batch of one: 'b h n d'
    out, attn = attention(q[None], k[None], v[None])
    out, attn = out[0], attn[0]

    out = merge_heads(out)
    return out @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = range(weights.shape[0])
    return [(i, j) for i, j in combinations(heads, 2)
            if np.abs(weights[i] - weights[j]).max() > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for heads in head_counts:
        if d_model % heads != 0:
            raise ValueError(f"dim {d_model} must be divisible by heads {heads}")
        dim_head = d_model // heads
        inner_dim = dim_head * heads
        to_q = to_k = to_v = d_model * inner_dim  # to_qkv: bias = False
        to_out = inner_dim * d_model + (d_model if bias else 0)  # nn.Linear(inner_dim, dim)
        counts[heads] = to_q + to_k + to_v + to_out
    return counts
