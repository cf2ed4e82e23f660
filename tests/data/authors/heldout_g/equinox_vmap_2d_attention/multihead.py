# Modelled on patrick-kidger/equinox, equinox/nn/_attention.py (dot_product_attention_weights with
# query / sqrt(query.shape[-1]) and einsum("sd,Sd->sS"); MultiheadAttention._project reshaping to
# (seq_length, num_heads, -1); jax.vmap(attn_fn, in_axes=1, out_axes=1) over the heads;
# use_query_bias / use_key_bias / use_value_bias / use_output_bias), with jax.nn.softmax: written
# in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    unnormalized = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return unnormalized / np.sum(unnormalized, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_length, width = M.shape
    if width != num_heads * d_head:
        raise ValueError(f"cannot split {width} features into {num_heads} heads of {d_head}")
    return M.reshape(seq_length, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_length, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(seq_length, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # query: (query_seq_length, qk_size), key: (kv_seq_length, qk_size),
    # value: (kv_seq_length, vo_size); vmap over heads from the caller
    query = Q / np.sqrt(Q.shape[-1])
    logits = np.einsum("sd,Sd->sS", query, K)
    weights = softmax(logits, axis=-1)
    attn = np.einsum("sS,Sd->sd", weights, V)
    return attn, weights


def _project(W: np.ndarray, x: np.ndarray, num_heads: int) -> np.ndarray:
    seq_length, _ = x.shape
    projection = x @ W
    return projection.reshape(seq_length, num_heads, -1)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    query_seq_length, query_size = X.shape
    if query_size % num_heads != 0:
        raise ValueError(f"query_size {query_size} is not divisible by num_heads {num_heads}")
    query_heads = _project(Wq, X, num_heads)
    key_heads = _project(Wk, X, num_heads)
    value_heads = _project(Wv, X, num_heads)

    # jax.vmap(attn_fn, in_axes=1, out_axes=1)
    results = [
        attention(query_heads[:, h], key_heads[:, h], value_heads[:, h])
        for h in range(num_heads)
    ]
    attn = np.stack([r[0] for r in results], axis=1)
    weights = np.stack([r[1] for r in results], axis=0)
    attn = attn.reshape(query_seq_length, -1)
    return attn @ Wo, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    flat = weights.reshape(num_heads, -1)
    diff = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1)
    return [
        (int(i), int(j))
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if diff[i, j] > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"query_size {d_model} is not divisible by num_heads {num_heads}")
        qk_size = vo_size = d_model // num_heads
        # query_proj, key_proj, value_proj: Linear(size, num_heads * qk_size / vo_size,
        # use_bias=False); output_proj: Linear(num_heads * vo_size, output_size,
        # use_bias=use_output_bias)
        n = 3 * d_model * num_heads * qk_size + num_heads * vo_size * d_model
        if bias:  # use_output_bias=True
            n += d_model
        counts[num_heads] = n
    return counts
