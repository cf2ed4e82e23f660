# Modelled on PTSown0222/TensorTonic-Solutions, transformers-multi-head-attention/
# transformers-multi-head-attention.py (NumPy: Q_proj.reshape(batch, seq, num_heads, d_k)
# .transpose(0, 2, 1, 3), K_split.transpose(0, 1, 3, 2), context.transpose(0, 2, 1, 3).reshape):
# written in that style for this test corpus, not copied. The student keeps a batch axis of 1.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, d_model = M.shape
    d_k = d_model // num_heads
    return M.reshape(seq_len, num_heads, d_k).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, d_k = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    K_transposed = K.transpose(0, 1, 3, 2)  # Shape: (batch_size, num_heads, d_k, seq_length)
    attn_score = (Q @ K_transposed) / np.sqrt(d_k)
    attn_prob = softmax(attn_score)
    return attn_prob @ V, attn_prob


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    Q = X[None]  # (batch=1, seq_len, d_model)
    batch_size, seq_len, d_model = Q.shape
    d_k = d_model // num_heads

    Q_proj = Q @ Wq  # Shape: (batch, seq_len, d_model)
    K_proj = Q @ Wk
    V_proj = Q @ Wv

    Q_split = Q_proj.reshape(batch_size, seq_len, num_heads, d_k).transpose(0, 2, 1, 3)
    K_split = K_proj.reshape(batch_size, seq_len, num_heads, d_k).transpose(0, 2, 1, 3)
    V_split = V_proj.reshape(batch_size, seq_len, num_heads, d_k).transpose(0, 2, 1, 3)

    K_transposed = K_split.transpose(0, 1, 3, 2)
    attn_score = (Q_split @ K_transposed) / np.sqrt(d_k)
    attn_prob = softmax(attn_score)
    context = attn_prob @ V_split
    context_concat = context.transpose(0, 2, 1, 3).reshape(batch_size, seq_len, d_model)
    output = context_concat @ Wo
    return output[0], attn_prob[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    out = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                out.append((i, j))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} not divisible by num_heads={num_heads}")
        layer = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in layer.parameters())
    return counts
