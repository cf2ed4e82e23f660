# Modelled on huggingface/transformers, models/perceiver/modeling_perceiver.py
# (PerceiverSelfAttention: self.layernorm1(hidden_states) applied inside the attention module
# before the queries, keys and values are projected; qk_channels / v_channels and the
# "must be divisible by num_heads" ValueErrors; transpose_for_scores(x, channels_per_head);
# `batch_size, num_heads, seq_len, q_head_dim = queries.shape`; scores / math.sqrt(q_head_dim);
# context_layer.permute(0, 2, 1, 3) then view(batch_size, seq_len, hiddens)): written in that
# style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    # nn.LayerNorm(q_dim) as initialised: weight 1, bias 0
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def transpose_for_scores(x: np.ndarray, num_heads: int, channels_per_head: int) -> np.ndarray:
    new_x_shape = x.shape[:-1] + (num_heads, channels_per_head)
    x = x.reshape(new_x_shape)
    return np.moveaxis(x, -2, -3)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    return transpose_for_scores(M, num_heads, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, v_head_dim = H.shape
    hiddens = num_heads * v_head_dim
    context_layer = H.transpose(1, 0, 2)
    return context_layer.reshape(seq_len, hiddens)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    queries, keys, values = Q, K, V
    # Take the dot product between the queries and keys to get the raw attention scores.
    attention_scores = np.matmul(queries, np.swapaxes(keys, -1, -2))
    batch_size, num_heads, seq_len, q_head_dim = queries.shape
    _, _, _, v_head_dim = values.shape
    attention_scores = attention_scores / math.sqrt(q_head_dim)
    # Normalize the attention scores to probabilities.
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = np.matmul(attention_probs, values)
    return context_layer, attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, q_dim = X.shape
    qk_channels = Wq.shape[1]
    v_channels = Wv.shape[1]
    if qk_channels % num_heads != 0:
        raise ValueError(f"qk_channels ({qk_channels}) must be divisible by num_heads ({num_heads}).")
    if v_channels % num_heads != 0:
        raise ValueError(f"v_channels ({v_channels}) must be divisible by num_heads ({num_heads}).")
    qk_channels_per_head = qk_channels // num_heads
    v_channels_per_head = v_channels // num_heads

    hidden_states = layer_norm(X)
    inputs = hidden_states  # self-attention: layernorm2 is the identity

    queries = split_heads(hidden_states @ Wq, num_heads, qk_channels_per_head)
    keys = split_heads(inputs @ Wk, num_heads, qk_channels_per_head)
    values = split_heads(inputs @ Wv, num_heads, v_channels_per_head)

    context_layer, attention_probs = attention(queries[None], keys[None], values[None])
    context_layer = merge_heads(context_layer[0])
    # PerceiverSelfOutput.dense
    return context_layer @ Wo, attention_probs[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"qk_channels ({d_model}) must be divisible by num_heads ({num_heads}).")
        n = 0
        n += 2 * d_model  # layernorm1: weight and bias
        # query, key, value
        n += 3 * (d_model * d_model + (d_model if bias else 0))
        # output dense
        n += d_model * d_model + (d_model if bias else 0)
        counts[num_heads] = n
    return counts
