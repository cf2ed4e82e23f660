# Modelled on srush/Tensor-Puzzles (Sasha Rush: every puzzle solved in one line from arange,
# where, broadcasting with None, comparisons and sums, no loops and no library reshuffling;
# outer products written as a[:, None] * b[None, :] and reduced with .sum):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

arange = np.arange
where = np.where


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"width {M.shape[-1]} != num_heads {num_heads} * d_head {d_head}")
    # out[h, i, k] = M[i, h * d_head + k]
    return M[arange(M.shape[0])[None, :, None],
             arange(num_heads)[:, None, None] * d_head + arange(d_head)[None, None, :]]


def merge_heads(H: np.ndarray) -> np.ndarray:
    # out[i, j] = H[j // d_head, i, j % d_head]
    num_heads, n, d_head = H.shape
    j = arange(num_heads * d_head)
    return H[(j // d_head)[None, :], arange(n)[:, None], (j % d_head)[None, :]]


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # scores[..., i, j] = sum_k Q[..., i, k] * K[..., j, k]
    scores = (Q[..., :, None, :] * K[..., None, :, :]).sum(-1) / np.sqrt(K.shape[-1])
    weights = softmax(scores, -1)
    # out[..., i, k] = sum_j weights[..., i, j] * V[..., j, k]
    out = (weights[..., :, :, None] * V[..., None, :, :]).sum(-2)
    return out, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if d_model % num_heads:
        raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
    d = d_model // num_heads
    out, weights = attention(split_heads(X @ Wq, num_heads, d),
                             split_heads(X @ Wk, num_heads, d),
                             split_heads(X @ Wv, num_heads, d))
    return merge_heads(out) @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    h = weights.shape[0]
    far = (abs(weights[:, None] - weights[None, :]) > atol).reshape(h, h, -1).any(-1)
    upper = arange(h)[:, None] < arange(h)[None, :]
    i, j = where(far & upper)
    return [(int(a), int(b)) for a, b in zip(i, j)]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"head count {h} does not divide d_model {d_model}")
        # in_proj (3d x d) + out_proj (d x d), and 3d + d biases
        counts[h] = 4 * d_model * d_model + 4 * d_model * int(bias)
    return counts
