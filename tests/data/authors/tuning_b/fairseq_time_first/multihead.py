# Modelled on facebookresearch/fairseq, fairseq/modules/multihead_attention.py (MultiheadAttention
# .forward: q *= self.scaling on the projection, view(tgt_len, bsz * num_heads, head_dim)
# .transpose(0, 1), bmm, softmax, need_head_weights): written in that style for this test corpus,
# not copied. Time-first (T, B, C) throughout, as fairseq is.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # utils.softmax(x, dim): computed in float
    x = np.asarray(x, dtype=np.float64)
    x = x - np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    tgt_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError("embed_dim must be num_heads * head_dim")
    return M.reshape(tgt_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaling = Q.shape[-1] ** -0.5
    q = Q * scaling  # fairseq scales its own projection in place; here a new array
    attn_weights = np.matmul(q, np.swapaxes(K, -1, -2))
    attn_weights_float = softmax(attn_weights, axis=-1)
    attn = np.matmul(attn_weights_float, V)
    return attn, attn_weights_float


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    tgt_len, embed_dim = X.shape
    head_dim = embed_dim // num_heads if num_heads > 0 else 0
    if num_heads <= 0 or head_dim * num_heads != embed_dim:
        raise ValueError("embed_dim must be divisible by num_heads")
    scaling = head_dim**-0.5

    q = X @ Wq
    k = X @ Wk
    v = X @ Wv
    q *= scaling

    q = q.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    k = k.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    v = v.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    src_len = k.shape[1]

    attn_weights = np.matmul(q, k.transpose(0, 2, 1))
    assert attn_weights.shape == (num_heads, tgt_len, src_len)
    attn_weights_float = softmax(attn_weights, axis=-1)

    attn = np.matmul(attn_weights_float, v)
    attn = attn.transpose(1, 0, 2).reshape(tgt_len, embed_dim)
    attn = attn @ Wo  # self.out_proj
    # need_head_weights=True: keep them per head, (num_heads, tgt_len, src_len)
    return attn, attn_weights_float


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in list(head_counts):
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"embed_dim {d_model} must be divisible by num_heads {num_heads}")
        m = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in m.parameters())
    return counts
