# Modelled on Tunstall, von Werra & Wolf, "Natural Language Processing with Transformers",
# chapter 3 "Transformer Anatomy" (nlp-with-transformers/notebooks: `scaled_dot_product_attention`
# with `dim_k = query.size(-1)`, `torch.bmm(query, key.transpose(1, 2)) / sqrt(dim_k)`,
# `F.softmax(scores, dim=-1)`; `AttentionHead` with its own `nn.Linear(embed_dim, head_dim)` for q,
# k and v; `MultiHeadAttention` with `head_dim = embed_dim // num_heads`, the heads'
# outputs `torch.cat(..., dim=-1)` and `output_linear`): written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable
from math import sqrt

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    exp_x = np.exp(x - x.max(axis=axis, keepdims=True))
    return exp_x / exp_x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # one slice of head_dim features per attention head
    return np.stack([M[:, h * d_head:(h + 1) * d_head] for h in range(num_heads)])


def merge_heads(H: np.ndarray) -> np.ndarray:
    # torch.cat([h(hidden_state) for h in self.heads], dim=-1)
    return np.concatenate([h for h in H], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # scaled_dot_product_attention(query, key, value), batched with bmm
    query, key, value = Q, K, V
    dim_k = query.shape[-1]
    scores = np.matmul(query, key.transpose(0, 2, 1)) / sqrt(dim_k)
    weights = softmax(scores, axis=-1)
    return np.matmul(weights, value), weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    hidden_state = X
    embed_dim = X.shape[-1]
    head_dim = embed_dim // num_heads
    head_outputs, head_weights = [], []
    for h in range(num_heads):
        # AttentionHead: its own q, k, v projections to head_dim
        cols = slice(h * head_dim, (h + 1) * head_dim)
        q = hidden_state @ Wq[:, cols]
        k = hidden_state @ Wk[:, cols]
        v = hidden_state @ Wv[:, cols]
        # the book's attention works on a batch: (batch_size, seq_len, head_dim)
        attn_outputs, attn_weights = attention(q[None], k[None], v[None])
        head_outputs.append(attn_outputs[0])
        head_weights.append(attn_weights[0])
    x = np.concatenate(head_outputs, axis=-1)
    x = x @ Wo  # output_linear
    return x, np.stack(head_weights)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = len(weights)
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from types import SimpleNamespace

    from torch import nn

    class AttentionHead(nn.Module):
        def __init__(self, embed_dim, head_dim):
            super().__init__()
            self.q = nn.Linear(embed_dim, head_dim)
            self.k = nn.Linear(embed_dim, head_dim)
            self.v = nn.Linear(embed_dim, head_dim)

    class MultiHeadAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            embed_dim = config.hidden_size
            num_heads = config.num_attention_heads
            head_dim = embed_dim // num_heads
            self.heads = nn.ModuleList(
                [AttentionHead(embed_dim, head_dim) for _ in range(num_heads)]
            )
            self.output_linear = nn.Linear(embed_dim, embed_dim)

    counts = {}
    for num_heads in head_counts:
        config = SimpleNamespace(hidden_size=d_model, num_attention_heads=num_heads)
        multihead_attn = MultiHeadAttention(config)
        counts[num_heads] = sum(p.numel() for p in multihead_attn.parameters())
    return counts
