# Modelled on openai/whisper, whisper/model.py (MultiHeadAttention.qkv_attention: q and k each
# scaled by (n_state // n_head) ** -0.25, q.view(*q.shape[:2], n_head, -1), returning the output
# and qk, the logits kept for the alignment heads; the key projection without a bias): written
# in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3), without the batch axis
    return M.reshape(*M.shape[:1], num_heads, -1).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
    x = H.transpose(1, 0, 2)
    return x.reshape(*x.shape[:1], -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** -0.25
    q = Q * scale
    k = np.swapaxes(K, -1, -2) * scale
    qk = q @ k
    w = softmax(qk, axis=-1)
    return w @ V, qk


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    n_ctx, n_state = X.shape
    if n_state % num_heads:
        raise ValueError(f"n_state={n_state} is not a multiple of n_head={num_heads}")
    d = n_state // num_heads
    q = split_heads(X @ Wq, num_heads, d)
    k = split_heads(X @ Wk, num_heads, d)
    v = split_heads(X @ Wv, num_heads, d)
    wv, qk = attention(q, k, v)
    return merge_heads(wv) @ Wo, qk


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = len(weights)
    return [
        (i, j)
        for i in range(n_head)
        for j in range(i + 1, n_head)
        if not (np.abs(weights[i] - weights[j]) <= atol).all()
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    out = {}
    for n_head in head_counts:
        if d_model % n_head:
            raise ValueError(f"n_head={n_head} does not divide n_state={d_model}")
        # query, key, value, out: Linear(n_state, n_state); key has bias=False
        weights = 4 * d_model * d_model
        biases = 3 * d_model if bias else 0
        out[n_head] = weights + biases
    return out
