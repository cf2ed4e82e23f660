# Modelled on CMU 11-868 LLM Systems, assignment 2 (llmsystem/llmsys_s24_hw2,
# minitorch/modules_transfomer.py: MultiHeadAttention.project_to_query_key_value returning q,
# kT and v with the keys already transposed; self_attention(q, kT, v) unpacking
# `_, _, k_dim, _ = kT.shape`, `assert q_dim == k_dim == v_dim` and computing
# softmax((q @ kT) / sqrt(attn_hidden_dim)) @ v; minitorch's softmax as e = exp(x), e / e.sum(dim);
# minitorch.operators.is_close): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def is_close(x, y):
    # minitorch.operators.is_close
    return np.abs(x - y) < 1e-2


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x)
    partition = e.sum(axis=axis, keepdims=True)
    return e / partition


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, n_embd = M.shape
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, attn_hidden_dim = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * attn_hidden_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """softmax((q @ kT) / sqrt(attn_hidden_dim)) @ V, with K passed in already transposed (kT)."""
    q, kT, v = Q, K, V
    *_, queries_len, q_dim = q.shape
    *_, k_dim, _ = kT.shape
    *_, v_dim = v.shape
    assert q_dim == k_dim == v_dim
    attn = softmax((q @ kT) / np.sqrt(q_dim), axis=-1)
    return attn @ v, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, n_embd = X.shape
    if n_embd % num_heads != 0:
        raise ValueError(f"n_embd={n_embd} is not divisible by n_head={num_heads}")
    attn_hidden_dim = n_embd // num_heads

    # project_to_query_key_value
    q = split_heads(X @ Wq, num_heads, attn_hidden_dim)
    kT = split_heads(X @ Wk, num_heads, attn_hidden_dim).transpose(0, 2, 1)
    v = split_heads(X @ Wv, num_heads, attn_hidden_dim)

    result, attn = attention(q, kT, v)
    return merge_heads(result) @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    pairs = []
    for i in range(n_head):
        for j in range(i + 1, n_head):
            if not is_close(weights[i], weights[j]).all():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"n_embd={d_model} is not divisible by n_head={n_head}")
        # q_projection, k_projection, v_projection, out_projection: Linear(n_embd, n_embd, bias)
        per_linear = d_model * d_model + (d_model if bias else 0)
        counts[n_head] = 4 * per_linear
    return counts
