# Modelled on a public NumPy "transformer from scratch" file (found in three public repositories
# under the line `for i in range(0, Q.shape[-1], heads_dim):`): `import scipy`,
# scipy.special.softmax(scores, axis=-1), a Python loop over column slices, one per head, and
# np.concatenate. Written in that style for this test corpus, not copied. Works wherever scipy is
# installed (Anaconda, Colab); the exercise says NumPy only.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.special


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return scipy.special.softmax(x, axis=axis)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("M.shape[-1] must be num_heads * d_head")
    heads = []
    for i in range(0, M.shape[-1], d_head):
        heads.append(M[:, i : i + d_head])
    return np.stack(heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # flatten the attention heads
    return np.concatenate(list(H), axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scaled dot product attention"""
    dim = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / dim**0.5
    scores = scipy.special.softmax(scores, axis=-1)
    return scores @ V, scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """multi-head attention mechanism: one attention per column slice"""
    if X.shape[-1] % num_heads:
        raise ValueError("Q dims must be divisible by num_heads")
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    heads_dim = Q.shape[-1] // num_heads
    attention_heads, attention_weights = [], []
    for i in range(0, Q.shape[-1], heads_dim):
        out, w = attention(Q[:, i : i + heads_dim], K[:, i : i + heads_dim],
                           V[:, i : i + heads_dim])
        attention_heads.append(out)
        attention_weights.append(w)
    multihead_attention = np.concatenate(attention_heads, axis=-1)
    return multihead_attention @ Wo, np.stack(attention_weights)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} does not divide d_model={d_model}")
        counts[h] = sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h,
                                                                       bias=bias).parameters())
    return counts
