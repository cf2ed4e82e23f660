# Modelled on Dao-AILab/flash-attention, tests/test_flash_attn.py (attention_ref: upcast with
# q.float(), k.float(), v.float(); d = q.shape[-1]; scores = einsum("bthd,bshd->bhts",
# q / math.sqrt(d), k); the causal local mask col_idx > row_idx + seqlen_k - seqlen_q filled with
# -inf; torch.softmax(scores, dim=-1).to(v.dtype); output.to(dtype=dtype_og)) and
# flash_attn/modules/mha.py (MHA: rearrange(qkv, "... (three h d) -> ... three h d"), causal=True
# for GPT models, assert embed_dim % num_heads == 0): written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

CAUSAL = True  # the GPT setting of flash_attn's MHA


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    p = np.exp(x - x_max)
    return p / np.sum(p, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # rearrange(x, "s (h d) -> h s d", h=num_heads)
    seqlen = M.shape[0]
    return M.reshape(seqlen, num_heads, -1).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # rearrange(o, "h s d -> s (h d)")
    nheads, seqlen, d = H.shape
    return H.transpose(1, 0, 2).reshape(seqlen, nheads * d)


def attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, causal: bool = False, upcast: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    dtype_og = Q.dtype
    q, k, v = Q, K, V
    if upcast:
        q, k, v = q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)
    seqlen_q, seqlen_k = q.shape[-2], k.shape[-2]
    d = q.shape[-1]
    scores = np.einsum("...td,...sd->...ts", q / math.sqrt(d), k)
    if causal:
        row_idx = np.arange(seqlen_q)[:, None]
        col_idx = np.arange(seqlen_k)[None, :]
        local_mask = col_idx > row_idx + seqlen_k - seqlen_q
        scores = np.where(local_mask, -np.inf, scores)
    attn = softmax(scores, axis=-1).astype(v.dtype)
    output = np.einsum("...ts,...sd->...td", attn, v)
    return output.astype(dtype_og), attn.astype(dtype_og)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seqlen, embed_dim = X.shape
    if embed_dim % num_heads != 0:
        raise ValueError(f"embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads
    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)
    context, attn = attention(q, k, v, causal=CAUSAL)
    out = merge_heads(context) @ Wo
    return out, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nheads = weights.shape[0]
    pairs = []
    for i in range(nheads):
        for j in range(i + 1, nheads):
            max_diff = np.abs(weights[i] - weights[j]).max()
            if max_diff > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        assert d_model % num_heads == 0, "embed_dim must be divisible by num_heads"
        # Wqkv: Linear(embed_dim, 3 * embed_dim), out_proj: Linear(embed_dim, embed_dim)
        wqkv = 3 * d_model * d_model + (3 * d_model if bias else 0)
        out_proj = d_model * d_model + (d_model if bias else 0)
        counts[num_heads] = wqkv + out_proj
    return counts
