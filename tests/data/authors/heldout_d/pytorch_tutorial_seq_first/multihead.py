# Modelled on the PyTorch tutorial "Language Modeling with nn.Transformer and torchtext"
# (TransformerModel.forward: src = self.embedding(src) * math.sqrt(self.d_model); data laid out
# [seq_len, batch_size]; generate_square_subsequent_mask) and torch.nn.MultiheadAttention's
# documented equations: written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (seq_len, d_model) -> (seq_len, nhead, head_dim) -> (nhead, seq_len, head_dim)
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"embed_dim {M.shape[-1]} != nhead * head_dim ({num_heads} * {d_head})")
    return M.reshape(M.shape[0], num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return H.swapaxes(0, 1).reshape(H.shape[1], -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = Q @ np.swapaxes(K, -2, -1) / math.sqrt(Q.shape[-1])
    attn_output_weights = softmax(scores, axis=-1)
    return attn_output_weights @ V, attn_output_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"embed_dim {d_model} must be divisible by nhead {num_heads}")
    head_dim = d_model // num_heads
    src = X * math.sqrt(d_model)  # as TransformerModel.forward scales the embeddings
    q = split_heads(src @ Wq, num_heads, head_dim)
    k = split_heads(src @ Wk, num_heads, head_dim)
    v = split_heads(src @ Wv, num_heads, head_dim)
    attn_output, attn_output_weights = attention(q, k, v)
    return merge_heads(attn_output) @ Wo, attn_output_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nhead = weights.shape[0]
    pairs = []
    for i in range(nhead):
        for j in range(i + 1, nhead):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for nhead in head_counts:
        if d_model % nhead != 0:
            raise ValueError(f"nhead={nhead} does not divide d_model={d_model}")
        model = torch.nn.MultiheadAttention(d_model, nhead, bias=bias)
        counts[nhead] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return counts
