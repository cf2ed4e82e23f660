# Modelled on keras-team/keras, keras/src/layers/attention/multi_head_attention.py
# (MultiHeadAttention._compute_attention: the query scaled by 1/sqrt(key_dim) first, einsum
# scores, softmax, then the attention dropout layer) with dropout=0.1 as the Keras transformer
# examples build it: written in that style for this test corpus, not copied. Ported to NumPy, the
# dropout runs on every call (NumPy has no training flag).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

DROPOUT = 0.1
_rng = np.random.default_rng()


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # keras.layers.Softmax: exp(x - logsumexp(x))
    m = np.max(x, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - lse)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # EinsumDense "abc,cde->abde" gives (T, N, H); the attention einsums want (N, T, H)
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"The last dimension {M.shape[-1]} is not num_heads * key_dim = {num_heads * d_head}"
        )
    return np.einsum("tnh->nth", M.reshape(M.shape[0], num_heads, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, T, key_dim = H.shape
    return np.einsum("nth->tnh", H).reshape(T, num_heads * key_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    key_dim = Q.shape[-1]
    # Note: Applying scalar multiply at the smaller end of einsum improves XLA performance, but
    # may introduce precision issues.
    query = Q * (1.0 / math.sqrt(float(key_dim)))
    # Take the dot product between "query" and "key" to get the raw attention scores.
    attention_scores = np.einsum("...kd,...qd->...qk", K, query)
    attention_scores = softmax(attention_scores, axis=-1)
    # This is actually dropping out entire tokens to attend to, which might seem a bit unusual,
    # but is taken from the original Transformer paper.
    keep = _rng.random(attention_scores.shape) >= DROPOUT
    final_attn_scores = attention_scores * keep / (1.0 - DROPOUT)
    attention_output = np.einsum("...qk,...kd->...qd", final_attn_scores, V)
    return attention_output, attention_scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    key_dim = d_model // num_heads
    query = split_heads(X @ Wq, num_heads, key_dim)
    key = split_heads(X @ Wk, num_heads, key_dim)
    value = split_heads(X @ Wv, num_heads, key_dim)
    attention_output, attention_scores = attention(query, key, value)
    attention_output = merge_heads(attention_output) @ Wo  # self._output_dense
    return attention_output, attention_scores


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    flat = weights.reshape(num_heads, -1)
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.max(np.abs(flat[i] - flat[j])) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        key_dim = d_model // num_heads
        # query/key/value EinsumDense kernels (d_model, num_heads, key_dim); output (num_heads, key_dim, d_model)
        n = 3 * d_model * num_heads * key_dim + num_heads * key_dim * d_model
        if bias:
            n += 3 * num_heads * key_dim + d_model
        counts[num_heads] = n
    return counts
