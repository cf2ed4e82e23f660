# Modelled on huggingface/transformers, models/phi/modeling_phi.py (PhiAttention: rotary_ndims =
# int(partial_rotary_factor * head_dim); query_rot, query_pass = q[..., :rotary_ndims],
# q[..., rotary_ndims:]; apply_rotary_pos_emb with rotate_half; the upcast to fp32 before the
# scores and the softmax, "softmax_in_fp32"; dense as the output projection): written in that style
# for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

PARTIAL_ROTARY_FACTOR = 0.5  # PhiConfig default
ROPE_THETA = 10000.0


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    q_len, width = M.shape
    if width != num_heads * d_head:
        raise ValueError(
            f"hidden_size must be divisible by num_heads (got `hidden_size`: {width} and "
            f"`num_heads`: {num_heads}, head_dim {d_head})."
        )
    return M.reshape(q_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate(list(H), axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # upcast attention to fp32 (softmax_in_fp32) is only needed for fp16 models
    head_dim = Q.shape[-1]
    attn_weights = np.matmul(Q, np.swapaxes(K, -2, -1)) / math.sqrt(head_dim)
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def rotate_half(x: np.ndarray) -> np.ndarray:
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return np.concatenate((-x2, x1), axis=-1)


def rotary_cos_sin(seq_len: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    inv_freq = 1.0 / (ROPE_THETA ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    t = np.arange(seq_len, dtype=np.float64)
    freqs = np.outer(t, inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_rotary_pos_emb(q, k, cos, sin):
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    q_len, hidden_size = X.shape
    head_dim = hidden_size // num_heads
    if head_dim * num_heads != hidden_size:
        raise ValueError(
            f"hidden_size must be divisible by num_heads (got `hidden_size`: {hidden_size} and "
            f"`num_heads`: {num_heads})."
        )
    rotary_ndims = int(PARTIAL_ROTARY_FACTOR * head_dim)
    rotary_ndims -= rotary_ndims % 2  # rotate_half needs an even width

    query_states = split_heads(X @ Wq, num_heads, head_dim)
    key_states = split_heads(X @ Wk, num_heads, head_dim)
    value_states = split_heads(X @ Wv, num_heads, head_dim)

    # Partial rotary embedding
    if rotary_ndims > 0:
        query_rot, query_pass = query_states[..., :rotary_ndims], query_states[..., rotary_ndims:]
        key_rot, key_pass = key_states[..., :rotary_ndims], key_states[..., rotary_ndims:]
        cos, sin = rotary_cos_sin(q_len, rotary_ndims)
        query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
        query_states = np.concatenate((query_rot, query_pass), axis=-1)
        key_states = np.concatenate((key_rot, key_pass), axis=-1)

    attn_output, attn_weights = attention(query_states, key_states, value_states)
    attn_output = merge_heads(attn_output)
    attn_output = attn_output @ Wo  # self.dense
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    h = weights.shape[0]
    for i in range(h):
        for j in range(i + 1, h):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={h}")
        per_linear = d_model * d_model + (d_model if bias else 0)
        counts[h] = 4 * per_linear  # q_proj, k_proj, v_proj, dense
    return counts
