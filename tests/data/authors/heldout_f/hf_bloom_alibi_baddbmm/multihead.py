# Modelled on huggingface/transformers, models/bloom/modeling_bloom.py (build_alibi_tensor's
# slopes; BloomAttention: inv_norm_factor = 1 / sqrt(head_dim), beta = 1.0, matmul_result =
# alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=beta, alpha=inv_norm_factor);
# F.softmax(attention_scores, dim=-1, dtype=torch.float32).to(input_dtype); _split_heads of the
# fused query_key_value viewed as (batch, seq, num_heads, 3, head_dim); _merge_heads; Linear layers
# with bias=True): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # F.softmax(..., dtype=torch.float32).to(input_dtype)
    input_dtype = x.dtype
    x = x.astype(np.float32)
    x = np.exp(x - np.max(x, axis=axis, keepdims=True))
    x = x / np.sum(x, axis=axis, keepdims=True)
    return x.astype(input_dtype)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_length, three_times_hidden_size = M.shape
    if three_times_hidden_size != num_heads * d_head:
        raise ValueError(
            f"cannot split a width of {three_times_hidden_size} into {num_heads} heads of {d_head}"
        )
    x = M.reshape(seq_length, num_heads, d_head)
    return x.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_length, head_dim = H.shape
    x = H.transpose(1, 0, 2)
    return x.reshape(seq_length, num_heads * head_dim)


def baddbmm(input: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: float, alpha: float):
    return beta * input + alpha * np.matmul(batch1, batch2)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    inv_norm_factor = 1.0 / math.sqrt(head_dim)
    beta = 1.0
    q_length, kv_length = Q.shape[-2], K.shape[-2]
    no_bias = np.zeros(Q.shape[:-2] + (q_length, kv_length), dtype=Q.dtype)
    matmul_result = baddbmm(no_bias, Q, np.swapaxes(K, -1, -2), beta=beta, alpha=inv_norm_factor)
    attention_probs = softmax(matmul_result, axis=-1)
    context_layer = np.matmul(attention_probs, V)
    return context_layer, attention_probs


def build_alibi_tensor(seq_length: int, num_heads: int, dtype) -> np.ndarray:
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = 2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3)))
    powers = np.arange(1, 1 + closest_power_of_2)
    slopes = np.power(base, powers)

    if closest_power_of_2 != num_heads:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3)))
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = np.arange(1, 1 + 2 * num_remaining_heads, 2)
        slopes = np.concatenate([slopes, np.power(extra_base, extra_powers)])

    arange_tensor = np.arange(seq_length)[None, None, :]  # (1, 1, kv_length)
    alibi = slopes[:, None, None] * arange_tensor  # (num_heads, 1, kv_length)
    return alibi.astype(dtype)


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
    inv_norm_factor = 1.0 / math.sqrt(head_dim)
    beta = 1.0

    query_layer = split_heads(X @ Wq, num_heads, head_dim)
    key_layer = split_heads(X @ Wk, num_heads, head_dim)
    value_layer = split_heads(X @ Wv, num_heads, head_dim)

    alibi = build_alibi_tensor(q_length, num_heads, X.dtype)

    # [num_heads, q_length, kv_length]
    matmul_result = baddbmm(
        alibi, query_layer, key_layer.transpose(0, 2, 1), beta=beta, alpha=inv_norm_factor
    )
    attention_probs = softmax(matmul_result, axis=-1)
    context_layer = np.matmul(attention_probs, value_layer)
    context_layer = merge_heads(context_layer)
    output_tensor = context_layer @ Wo
    return output_tensor, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    num_heads = weights.shape[0]
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"hidden_size {d_model} is not divisible by n_head {n_head}")
        query_key_value = 3 * d_model * d_model + 3 * d_model  # Linear(hidden, 3 * hidden, bias=True)
        dense = d_model * d_model + d_model  # Linear(hidden, hidden)
        counts[n_head] = query_key_value + dense
    return counts
