# Modelled on huggingface/transformers, models/falcon/modeling_falcon.py (FalconAttention with
# config.multi_query: query_key_value = Linear(hidden_size, hidden_size + 2 * head_dim),
# _split_heads viewing the fused qkv as (batch, seq, num_heads + 2, head_dim) and taking
# [..., :-2, :], [..., [-2], :], [..., [-1], :] as query, key and value; attention_scores /=
# math.sqrt(head_dim); _merge_heads; the "hidden_size must be divisible by num_heads" ValueError):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # the fused view: every head_dim-wide block of the width is one head
    seq_length = M.shape[0]
    return M.reshape(seq_length, -1, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_length, head_dim = H.shape
    x = H.transpose(1, 0, 2)
    return x.reshape(seq_length, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    attention_scores = Q @ np.swapaxes(K, -1, -2)
    attention_scores = attention_scores / math.sqrt(head_dim)
    attention_scores = softmax(attention_scores, axis=-1)
    attn_output = attention_scores @ V
    return attn_output, attention_scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    q_length, hidden_size = X.shape
    head_dim = hidden_size // num_heads
    if head_dim * num_heads != hidden_size:
        raise ValueError(
            f"`hidden_size` must be divisible by num_heads (got `hidden_size`: {hidden_size} and"
            f" `num_heads`: {num_heads})."
        )

    # multi_query: one key head and one value head shared by all the query heads
    query_key_value = np.concatenate([Wq, Wk[:, :head_dim], Wv[:, :head_dim]], axis=1)
    fused_qkv = X @ query_key_value
    fused_qkv = fused_qkv.reshape(q_length, num_heads + 2, head_dim)
    query_layer = fused_qkv[:, :-2, :].transpose(1, 0, 2)
    key_layer = fused_qkv[:, [-2], :].transpose(1, 0, 2)
    value_layer = fused_qkv[:, [-1], :].transpose(1, 0, 2)

    key_layer = np.broadcast_to(key_layer, (num_heads, q_length, head_dim))
    value_layer = np.broadcast_to(value_layer, (num_heads, q_length, head_dim))

    attn_output, attention_probs = attention(query_layer, key_layer, value_layer)
    attn_output = merge_heads(attn_output)
    output_tensor = attn_output @ Wo
    return output_tensor, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.any(np.abs(weights[i] - weights[j]) > atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"`hidden_size` must be divisible by num_heads (got `hidden_size`: {d_model} and"
                f" `num_heads`: {num_heads})."
            )
        head_dim = d_model // num_heads
        qkv_out_dim = d_model + 2 * head_dim  # multi_query
        query_key_value = d_model * qkv_out_dim + (qkv_out_dim if bias else 0)
        dense = d_model * d_model + (d_model if bias else 0)
        counts[num_heads] = query_key_value + dense
    return counts
