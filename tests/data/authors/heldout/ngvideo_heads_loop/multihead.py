# Modelled on karpathy/ng-video-lecture, gpt.py ("Let's build GPT": class Head with a tril buffer,
# wei = q @ k.transpose(-2,-1) * C**-0.5 where C is the input width, masked_fill(tril == 0, -inf);
# class MultiHeadAttention concatenating [h(x) for h in self.heads] and projecting): written in that
# style for this test corpus, not copied. Each head is a helper of the student's own that slices
# the weight columns; attention() is written in the same style.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

block_size = 256
tril = np.tril(np.ones((block_size, block_size)))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / ex.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    T, C = M.shape
    if C != num_heads * d_head:
        raise ValueError(f"n_embd={C} is not n_head * head_size={num_heads * d_head}")
    return np.stack([M[:, h * d_head : (h + 1) * d_head] for h in range(num_heads)])


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate([h for h in H], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    T, S = Q.shape[-2], K.shape[-2]
    # compute attention scores ("affinities")
    wei = Q @ np.swapaxes(K, -2, -1) * Q.shape[-1] ** -0.5  # (T, hs) @ (hs, S) -> (T, S)
    wei = np.where(tril[:T, :S] == 0, float("-inf"), wei)  # (T, S)
    wei = softmax(wei, axis=-1)
    # perform the weighted aggregation of the values
    return wei @ V, wei


def _head(x, key, query, value):
    """one head of self-attention"""
    T, C = x.shape
    k = x @ key  # (T, hs)
    q = x @ query  # (T, hs)
    wei = q @ k.T * C**-0.5  # (T, hs) @ (hs, T) -> (T, T)
    wei = np.where(tril[:T, :T] == 0, float("-inf"), wei)
    wei = softmax(wei, axis=-1)
    v = x @ value
    return wei @ v, wei


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """multiple heads of self-attention in parallel"""
    n_embd = X.shape[-1]
    if n_embd % num_heads:
        raise ValueError(f"n_embd={n_embd} is not divisible by n_head={num_heads}")
    hs = n_embd // num_heads
    heads = [
        _head(X, Wk[:, h * hs : (h + 1) * hs], Wq[:, h * hs : (h + 1) * hs],
              Wv[:, h * hs : (h + 1) * hs])
        for h in range(num_heads)
    ]
    out = np.concatenate([o for o, _ in heads], axis=-1)
    return out @ Wo, np.stack([w for _, w in heads])


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for n_head in head_counts:
        if d_model % n_head:
            raise ValueError(f"n_head={n_head} does not divide n_embd={d_model}")
        m = nn.MultiheadAttention(d_model, n_head, bias=bias)
        # print the number of parameters in the model
        counts[n_head] = sum(p.numel() for p in m.parameters())
    return counts
