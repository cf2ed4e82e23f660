# Modelled on huggingface/candle (candle-transformers/src/models/bert.rs and friends, Rust:
# `transpose_for_scores` as `xs.reshape(new_x_shape)?.transpose(1, 2)?.contiguous()`,
# `let (b_sz, n_head, seq_len, head_dim) = q.dims4()?`, `q.matmul(&k.t()?)?` with `t()` swapping
# the last two dims, `(attn / (head_dim as f64).sqrt())?`,
# `candle_nn::ops::softmax(&xs, D::Minus1)` as max_keepdim / broadcast_sub / exp / sum_keepdim /
# broadcast_div, `narrow(dim, start, len)`, `to_dtype(DType::F32)` on loading): the Rust
# translated back to NumPy for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class D:
    Minus1 = -1
    Minus2 = -2


def _dim(x, dim):
    return dim % x.ndim


def softmax(x: np.ndarray, axis: int = D.Minus1) -> np.ndarray:
    dim = _dim(x, axis)
    max_ = x.max(axis=dim, keepdims=True)  # max_keepdim
    diff = x - max_  # broadcast_sub
    num = np.exp(diff)
    den = num.sum(axis=dim, keepdims=True)  # sum_keepdim
    return num / den  # broadcast_div


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # transpose_for_scores; reshape fails (ValueError) when the sizes do not match
    seq_len, _hidden = M.shape
    xs = M.reshape((seq_len, num_heads, d_head))
    return np.ascontiguousarray(xs.transpose(1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_head, seq_len, head_dim = H.shape
    xs = np.ascontiguousarray(H.transpose(1, 0, 2))
    return xs.reshape((seq_len, n_head * head_dim))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b_sz, n_head, seq_len, head_dim = Q.shape  # q.dims4()?
    attn = Q @ np.swapaxes(K, -2, -1)  # k.t()
    attn = attn / np.sqrt(float(head_dim))
    attn = softmax(attn, D.Minus1)
    out = attn @ V
    return out, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, hidden_size = X.shape
    if hidden_size % num_heads != 0:
        raise ValueError(f"hidden_size {hidden_size} not divisible by num_heads {num_heads}")
    head_dim = hidden_size / num_heads
    head_dim = int(head_dim)
    q = split_heads(X @ Wq, num_heads, head_dim)[None]  # unsqueeze(0)?
    k = split_heads(X @ Wk, num_heads, head_dim)[None]
    v = split_heads(X @ Wv, num_heads, head_dim)[None]
    out, attn = attention(q, k, v)
    out = merge_heads(out[0])  # squeeze(0)?
    return out @ Wo, attn[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    pairs = []  # Vec::new()
    for i in range(n_head):
        for j in range(i + 1, n_head):
            diff = np.abs(weights[i] - weights[j]).max()  # (a - b).abs()?.max_all()?
            if diff > atol:
                pairs.append((i, j))  # pairs.push((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"num_heads {h} does not divide d_model {d_model}")
        # candle_nn::linear(d_model, d_model, vb)?: weight (d_model, d_model) and bias (d_model)
        linear = d_model * d_model + d_model
        counts[h] = 4 * linear  # query, key, value, dense
    return counts
