# Modelled on the CS231n assignment 3 MultiHeadAttention (cs231n/transformer_layers.py) as solved
# in students' public repositories (e.g. QitaoZhao/My-solution-to-CS231n-2021,
# assignment3/cs231n/transformer_layers.py): assert on the head count, view + transpose(1, 2),
# matmul with K.transpose(2, 3), all computed inside forward. Written in that style for this test
# corpus, not copied; the batch axis N is dropped, so transpose(2, 3) becomes transpose(0, 2, 1).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / np.sum(ex, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    S, E = M.shape
    if E != num_heads * d_head:
        raise ValueError(f"cannot split {E} features into {num_heads} heads of {d_head}")
    # (S, E) -> (S, H, E/H) -> (H, S, E/H)
    return M.reshape(S, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # (H, S, E/H) -> (S, H, E/H) -> (S, E)
    n_head, S, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(S, n_head * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # (H, S, E/H) x (H, E/H, T) = (H, S, T)
    scores = np.matmul(Q, K.transpose(0, 2, 1)) / math.sqrt(Q.shape[-1])
    attn_weights = softmax(scores, axis=-1)
    # (H, S, T) x (H, T, E/H) = (H, S, E/H)
    return np.matmul(attn_weights, V), attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    S, E = X.shape
    assert E % num_heads == 0
    H = num_heads
    # Split shape of query, key and value into (S, H, E/H), swap axes to (H, S, E/H)
    Q = (X @ Wq).reshape(S, H, E // H).transpose(1, 0, 2)
    K = (X @ Wk).reshape(S, H, E // H).transpose(1, 0, 2)
    V = (X @ Wv).reshape(S, H, E // H).transpose(1, 0, 2)
    # Calculate similarities by matrix multiplying query and key, scale by 1/(E/H)**0.5
    similarity_scores = np.matmul(Q, K.transpose(0, 2, 1)) / (E / H) ** 0.5
    attn_weights = softmax(similarity_scores, axis=-1)
    output = np.matmul(attn_weights, V)
    # Reorder axes into original shape, reshape output into (S, E), then project output.
    output = output.transpose(1, 0, 2).reshape(S, E) @ Wo
    return output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    H = weights.shape[0]
    for i in range(H):
        for j in range(i + 1, H):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"num_heads={h} does not divide embed_dim={d_model}")
        layer = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in layer.parameters())
    return counts
