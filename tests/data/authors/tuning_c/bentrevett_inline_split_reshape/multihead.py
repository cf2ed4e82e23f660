# Modelled on bentrevett/pytorch-seq2seq, "6 - Attention is All You Need" (MultiHeadAttentionLayer:
# fc_q/fc_k/fc_v, energy = Q K^T / scale, softmax, x = attention V, permute back, fc_o; and its
# count_parameters helper): written in that style for this test corpus, not copied. On the way to
# 2-D, multi_head_attention reshapes the projections straight to [n heads, seq len, head dim].
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, hid_dim = M.shape
    if hid_dim != num_heads * d_head:
        raise ValueError("hid_dim must equal n_heads * head_dim")
    # [seq len, hid dim] -> [seq len, n heads, head dim] -> [n heads, seq len, head dim]
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_heads, seq_len, head_dim = H.shape
    # [n heads, seq len, head dim] -> [seq len, n heads, head dim] -> [seq len, hid dim]
    return H.transpose(1, 0, 2).reshape(seq_len, n_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = np.sqrt(Q.shape[-1])
    # energy = [..., query len, key len]
    energy = np.matmul(Q, np.swapaxes(K, -1, -2)) / scale
    attention = softmax(energy, axis=-1)
    x = np.matmul(attention, V)
    return x, attention


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, hid_dim = X.shape
    if hid_dim % num_heads != 0:
        raise ValueError("hid_dim must be divisible by n_heads")
    head_dim = hid_dim // num_heads
    scale = np.sqrt(head_dim)

    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv
    # Q = [n heads, query len, head dim]
    Q = Q.reshape(num_heads, -1, head_dim)
    K = K.reshape(num_heads, -1, head_dim)
    V = V.reshape(num_heads, -1, head_dim)

    energy = np.matmul(Q, K.transpose(0, 2, 1)) / scale
    attention = softmax(energy, axis=-1)
    x = np.matmul(attention, V)  # [n heads, query len, head dim]

    x = x.transpose(1, 0, 2).reshape(seq_len, hid_dim)  # [query len, hid dim]
    x = x @ Wo
    return x, attention


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    pairs = []
    for i in range(n_heads):
        for j in range(i + 1, n_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def count_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    return {h: count_parameters(nn.MultiheadAttention(d_model, h, bias=bias)) for h in head_counts}
