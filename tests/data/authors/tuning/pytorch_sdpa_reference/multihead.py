# Modelled on the PyTorch documentation of torch.nn.functional.scaled_dot_product_attention
# (pytorch/pytorch, torch/nn/functional.py docstring: the "efficient implementation equivalent"
# with scale_factor = 1 / math.sqrt(query.size(-1)), attn_bias, query @ key.transpose(-2, -1) and
# torch.softmax(attn_weight, dim=-1)): written in that style for this test corpus, not copied.
# The student ports it to NumPy but keeps torch.softmax for the softmax itself.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return torch.softmax(torch.from_numpy(np.asarray(x)), dim=axis).numpy()


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    L, E = M.shape
    if E != num_heads * d_head:
        raise ValueError(f"embed_dim {E} != num_heads * head_dim = {num_heads * d_head}")
    return np.swapaxes(M.reshape(L, num_heads, d_head), 0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, L, head_dim = H.shape
    return np.swapaxes(H, 0, 1).reshape(L, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    L, S = Q.shape[-2], K.shape[-2]
    scale_factor = 1 / math.sqrt(Q.shape[-1])
    attn_bias = np.zeros((L, S), dtype=Q.dtype)
    attn_weight = Q @ np.swapaxes(K, -2, -1) * scale_factor
    attn_weight = attn_weight + attn_bias
    attn_weight = softmax(attn_weight, axis=-1)
    return attn_weight @ V, attn_weight


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    L, E = X.shape
    if E % num_heads != 0:
        raise ValueError("embed_dim must be divisible by num_heads")
    head_dim = E // num_heads
    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)
    out, attn_weight = attention(q, k, v)
    return merge_heads(out) @ Wo, attn_weight


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if float(np.max(np.abs(weights[i] - weights[j]))) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"embed_dim {d_model} is not divisible by num_heads {num_heads}")
        # in_proj_weight is (3 * embed_dim, embed_dim), out_proj.weight is (embed_dim, embed_dim)
        counts[num_heads] = 3 * d_model * d_model + d_model * d_model
    return counts
