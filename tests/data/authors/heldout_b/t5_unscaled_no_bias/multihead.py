# Modelled on huggingface/transformers, models/t5/modeling_t5.py (T5Attention: shape/unshape
# helpers, scores = q @ k^T with no 1/sqrt(d) scaling -- "Mesh TensorFlow initialization to avoid
# scaling before softmax" -- and no bias in q, k, v, o): written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
    scores = np.asarray(x, dtype=np.float64)
    scores = scores - scores.max(axis=axis, keepdims=True)
    probs = np.exp(scores)
    return probs / probs.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """shape: (seq_length, inner_dim) -> (n_heads, seq_length, key_value_proj_dim)"""
    seq_length, inner_dim = M.shape
    if inner_dim != num_heads * d_head:
        raise ValueError(f"inner_dim {inner_dim} != n_heads * key_value_proj_dim")
    return M.reshape(seq_length, num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """unshape: (n_heads, seq_length, key_value_proj_dim) -> (seq_length, inner_dim)"""
    n_heads, seq_length, d_kv = H.shape
    return H.swapaxes(0, 1).reshape(seq_length, n_heads * d_kv)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # compute scores, equivalent of np.einsum("...qd,...kd->...qk"); T5 does not scale them
    scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    attn_weights = softmax(scores, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model {d_model} is not divisible by n_heads {num_heads}")
    key_value_proj_dim = d_model // num_heads
    query_states = split_heads(X @ Wq, num_heads, key_value_proj_dim)
    key_states = split_heads(X @ Wk, num_heads, key_value_proj_dim)
    value_states = split_heads(X @ Wv, num_heads, key_value_proj_dim)
    attn_output, attn_weights = attention(query_states, key_states, value_states)
    attn_output = merge_heads(attn_output) @ Wo  # self.o
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = len(weights)
    return [
        (i, j)
        for i in range(n_heads)
        for j in range(i + 1, n_heads)
        if float(np.max(np.abs(weights[i] - weights[j]))) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_heads in head_counts:
        if n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"d_model {d_model} is not divisible by n_heads {n_heads}")
        d_kv = d_model // n_heads
        inner_dim = n_heads * d_kv
        # q, k, v: Linear(d_model, inner_dim, bias=False); o: Linear(inner_dim, d_model, bias=False)
        counts[n_heads] = 3 * d_model * inner_dim + inner_dim * d_model
    return counts
