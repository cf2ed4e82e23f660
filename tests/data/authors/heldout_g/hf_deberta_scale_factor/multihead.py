# Modelled on huggingface/transformers, models/deberta/modeling_deberta.py (DisentangledSelfAttention:
# transpose_for_scores with new_x_shape = x.size()[:-1] + (num_attention_heads, -1) and
# permute(0, 2, 1, 3); scale_factor = 1 + len(pos_att_type); scale = sqrt(query_layer.size(-1) *
# scale_factor); query_layer / scale; XSoftmax; in_proj without bias plus q_bias and v_bias):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# DebertaConfig: relative_attention=True, pos_att_type=["c2p", "p2c"]
POS_ATT_TYPE = ("c2p", "p2c")


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # XSoftmax without a mask
    x_max = np.amax(x, axis=axis, keepdims=True)
    output = np.exp(x - x_max)
    return output / np.sum(output, axis=axis, keepdims=True)


def transpose_for_scores(x: np.ndarray, attention_heads: int) -> np.ndarray:
    new_x_shape = x.shape[:-1] + (attention_heads, -1)
    x = x.reshape(new_x_shape)
    return x.transpose(1, 0, 2)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    return transpose_for_scores(M, num_heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    context_layer = H.transpose(1, 0, 2)
    new_context_layer_shape = context_layer.shape[:-2] + (-1,)
    return context_layer.reshape(new_context_layer_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Take the dot product between "query" and "key" to get the raw attention scores.
    scale_factor = 1 + len(POS_ATT_TYPE)
    scale = math.sqrt(Q.shape[-1] * scale_factor)
    query_layer = Q / scale
    attention_scores = np.matmul(query_layer, np.swapaxes(K, -1, -2))
    attention_probs = softmax(attention_scores, -1)
    context_layer = np.matmul(attention_probs, V)
    return context_layer, attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    hidden_size = X.shape[-1]
    if hidden_size % num_heads != 0:
        raise ValueError(
            f"The hidden size ({hidden_size}) is not a multiple of the number of attention "
            f"heads ({num_heads})"
        )
    attention_head_size = hidden_size // num_heads
    query_layer = split_heads(X @ Wq, num_heads, attention_head_size)
    key_layer = split_heads(X @ Wk, num_heads, attention_head_size)
    value_layer = split_heads(X @ Wv, num_heads, attention_head_size)

    context_layer, attention_probs = attention(query_layer, key_layer, value_layer)
    context_layer = merge_heads(context_layer)
    return context_layer @ Wo, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if not np.all(np.abs(weights[i] - weights[j]) <= atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_attention_heads in head_counts:
        if d_model % num_attention_heads != 0:
            raise ValueError(
                f"The hidden size ({d_model}) is not a multiple of the number of attention "
                f"heads ({num_attention_heads})"
            )
        # in_proj: Linear(hidden_size, 3 * all_head_size, bias=False); DebertaSelfOutput.dense
        n = 3 * d_model * d_model + d_model * d_model
        if bias:
            n += d_model + d_model  # q_bias, v_bias
            n += d_model  # dense.bias
        counts[num_attention_heads] = n
    return counts
