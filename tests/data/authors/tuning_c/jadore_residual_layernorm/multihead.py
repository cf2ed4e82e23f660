# Modelled on jadore801120/attention-is-all-you-need-pytorch, transformer/Modules.py and
# transformer/SubLayers.py (ScaledDotProductAttention with temperature = d_k ** 0.5, heads folded
# into the batch, bmm(q, k.transpose(1, 2)), Softmax(dim=2); MultiHeadAttention that adds the
# residual and applies LayerNorm(eps=1e-6) itself): written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    len_q, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError(f"expected {num_heads} * {d_head} features, got {d_model}")
    return M.reshape(len_q, num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_head, len_q, d_v = H.shape
    return H.swapaxes(0, 1).reshape(len_q, n_head * d_v)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # (n_head * sz_b) x len_q x d_k
    temperature = np.power(Q.shape[-1], 0.5)
    attn = np.matmul(Q, K.transpose(0, 2, 1))
    attn = attn / temperature
    attn = softmax(attn, axis=2)
    output = np.matmul(attn, V)
    return output, attn


def _layer_norm(x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    len_q, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model must be a multiple of n_head")
    n_head = num_heads
    d_k = d_v = d_model // n_head

    residual = X

    q = (X @ Wq).reshape(len_q, n_head, d_k).transpose(1, 0, 2)  # n_head x lq x dk
    k = (X @ Wk).reshape(len_q, n_head, d_k).transpose(1, 0, 2)
    v = (X @ Wv).reshape(len_q, n_head, d_v).transpose(1, 0, 2)

    output, attn = attention(q, k, v)

    output = output.transpose(1, 0, 2).reshape(len_q, -1)  # lq x (n_head * dv)
    output = output @ Wo
    output = output + residual
    output = _layer_norm(output)
    return output, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = len(weights)
    return [
        (i, j)
        for i in range(n_head)
        for j in range(i + 1, n_head)
        if np.abs(weights[i] - weights[j]).max() > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if n_head < 1 or d_model % n_head:
            raise ValueError(f"n_head={n_head} does not divide d_model={d_model}")
        d_k = d_v = d_model // n_head
        n = 2 * d_model * n_head * d_k + d_model * n_head * d_v + n_head * d_v * d_model
        if bias:
            n += 2 * n_head * d_k + n_head * d_v + d_model
        counts[n_head] = n
    return counts
