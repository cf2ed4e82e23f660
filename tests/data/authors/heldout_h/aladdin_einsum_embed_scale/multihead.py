# Modelled on aladdinpersson/Machine-Learning-Collection,
# ML/Pytorch/more_advanced/transformer_from_scratch/transformer_from_scratch.py (SelfAttention:
# head_dim = embed_size // heads with an assert; reshape(N, len, heads, head_dim); per-head
# nn.Linear(head_dim, head_dim, bias=False) for values, keys and queries and fc_out =
# nn.Linear(heads * head_dim, embed_size); einsum("nqhd,nkhd->nhqk"); softmax(energy /
# embed_size ** (1 / 2), dim=3); einsum("nhql,nlhd->nqhd").reshape(N, query_len, heads * head_dim)):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    x = np.exp(x)
    return x / x.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, embed_size = M.shape
    assert d_head * num_heads == embed_size, "Embedding size needs to be divisible by heads"
    # Split the embedding into self.heads different pieces
    M = M.reshape(seq_len, num_heads, d_head)
    return np.einsum("nhd->hnd", M)


def merge_heads(H: np.ndarray) -> np.ndarray:
    heads, seq_len, head_dim = H.shape
    return np.einsum("hnd->nhd", H).reshape(seq_len, heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Q: (heads, query_len, head_dim), K: (heads, key_len, head_dim)
    energy = np.einsum("hqd,hkd->hqk", Q, K)
    # energy: (heads, query_len, key_len)
    attn = softmax(energy / (Q.shape[-1] ** (1 / 2)), axis=2)
    out = np.einsum("hql,hld->hqd", attn, V)
    return out, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    query_len, embed_size = X.shape
    heads = num_heads
    head_dim = embed_size // heads
    assert head_dim * heads == embed_size, "Embedding size needs to be divisible by heads"

    values = (X @ Wv).reshape(query_len, heads, head_dim)  # (value_len, heads, head_dim)
    keys = (X @ Wk).reshape(query_len, heads, head_dim)  # (key_len, heads, head_dim)
    queries = (X @ Wq).reshape(query_len, heads, head_dim)  # (query_len, heads, head_dim)

    # Einsum does matrix mult. for query*keys for each head
    energy = np.einsum("qhd,khd->hqk", queries, keys)
    # energy: (heads, query_len, key_len)

    # Normalize energy values so that they sum to 1. Also divide by scaling factor for
    # better stability
    attention = softmax(energy / (embed_size ** (1 / 2)), axis=2)

    out = np.einsum("hql,lhd->qhd", attention, values).reshape(query_len, heads * head_dim)
    # out after matrix multiply: (query_len, heads, head_dim), then flatten the last two
    out = out @ Wo
    return out, attention


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = weights.shape[0]
    diff = np.abs(np.einsum("hqk->hqk", weights)[:, None] - weights[None, :])
    different = diff.reshape(heads, heads, -1).max(axis=-1) > atol
    return [(i, j) for i in range(heads) for j in range(i + 1, heads) if different[i, j]]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    embed_size = d_model
    for heads in head_counts:
        head_dim = embed_size // heads
        assert head_dim * heads == embed_size, "Embedding size needs to be divisible by heads"
        # self.values, self.keys, self.queries = nn.Linear(head_dim, head_dim, bias=False)
        total = 3 * head_dim * head_dim
        # self.fc_out = nn.Linear(heads * head_dim, embed_size)
        total += heads * head_dim * embed_size
        if bias:
            total += embed_size
        counts[heads] = total
    return counts
