# Modelled on pytorch/pytorch, torch/nn/functional.py (multi_head_attention_forward: packed in
# projection, q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1), q_scaled = q *
# math.sqrt(1.0 / float(E)), bmm with k.transpose(-2, -1), softmax(dim=-1), and
# "if average_attn_weights: attn_output_weights = attn_output_weights.mean(dim=1)" with
# average_attn_weights=True by default): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    y = np.exp(x - x_max)
    return y / np.sum(y, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    tgt_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(f"embed_dim {embed_dim} not equal to num_heads * head_dim")
    return M.reshape(tgt_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    E = Q.shape[-1]
    q_scaled = Q * math.sqrt(1.0 / float(E))
    attn_output_weights = q_scaled @ np.swapaxes(K, -2, -1)
    attn_output_weights = softmax(attn_output_weights, axis=-1)
    attn_output = attn_output_weights @ V
    return attn_output, attn_output_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
    average_attn_weights: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    tgt_len, embed_dim = X.shape
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    # in-projection, packed: one matmul, then unflatten into q, k, v
    in_proj_weight = np.concatenate([Wq, Wk, Wv], axis=1)
    q, k, v = np.split(X @ in_proj_weight, 3, axis=-1)
    # reshape q, k, v for multihead attention and make them batch first
    q = q.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    k = k.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    v = v.reshape(tgt_len, num_heads, head_dim).transpose(1, 0, 2)
    attn_output, attn_output_weights = attention(q, k, v)
    attn_output = attn_output.transpose(1, 0, 2).reshape(tgt_len, embed_dim)
    attn_output = attn_output @ Wo
    # optionally average attention weights over heads
    if average_attn_weights:
        attn_output_weights = attn_output_weights.mean(axis=0)
    return attn_output, attn_output_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [(i, j) for i in range(num_heads) for j in range(i + 1, num_heads)
            if np.abs(weights[i] - weights[j]).max() > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"embed_dim {d_model} not divisible by num_heads {num_heads}")
        counts[num_heads] = sum(
            p.numel() for p in torch.nn.MultiheadAttention(d_model, num_heads, bias=bias).parameters()
        )
    return counts
