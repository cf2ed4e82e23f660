# Modelled on openai/gpt-2, src/model.py (softmax with reduce_max / keepdims; split_states with
# m//n and merge_states; split_heads / merge_heads as transposes [0, 2, 1, 3]; multihead_attn
# scaling w by tf.rsqrt(v.shape[-1]); attn(): `assert n_state % hparams.n_head == 0`, c_attn
# projecting to n_state*3 and tf.split(c, 3, axis=2); c_proj): written in that style for this
# test corpus, not copied. The causal mask_attn_weights is left out: the module's attention
# has no mask.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def shape_list(x):
    return list(x.shape)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / np.sum(ex, axis=axis, keepdims=True)


def split_states(x, n):
    """Reshape the last dimension of x into [n, x.shape[-1]/n]."""
    *start, m = shape_list(x)
    return np.reshape(x, start + [n, m // n])


def merge_states(x):
    """Smash the last two dimensions of x into a single dimension."""
    *start, a, b = shape_list(x)
    return np.reshape(x, start + [a * b])


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # From [sequence, features] to [heads, sequence, features]
    return np.transpose(split_states(M, num_heads), [1, 0, 2])


def merge_heads(H: np.ndarray) -> np.ndarray:
    # Reverse of split_heads
    return merge_states(np.transpose(H, [1, 0, 2]))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # q, k, v have shape [..., sequence, features]
    w = np.matmul(Q, np.swapaxes(K, -1, -2))
    w = w * (1.0 / np.sqrt(V.shape[-1]))
    w = softmax(w)
    a = np.matmul(w, V)
    return a, w


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    n_state = X.shape[-1]
    assert n_state % num_heads == 0
    c_attn = np.concatenate([Wq, Wk, Wv], axis=1)
    c = X @ c_attn
    q, k, v = map(lambda t: split_heads(t, num_heads, n_state // num_heads), np.split(c, 3, axis=1))
    a, w = attention(q, k, v)
    a = merge_heads(a)
    a = a @ Wo  # c_proj
    return a, w


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(n_head, n_head, -1).max(axis=-1)
    return [(i, j) for i in range(n_head) for j in range(i + 1, n_head) if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"n_embd {d_model} is not divisible by n_head {n_head}")
        # c_attn: w [nx, 3 * nx] (+ b [3 * nx]); c_proj: w [nx, nx] (+ b [nx])
        n = 3 * d_model * d_model + d_model * d_model
        if bias:
            n += 3 * d_model + d_model
        counts[n_head] = n
    return counts
