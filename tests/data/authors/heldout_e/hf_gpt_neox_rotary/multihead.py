# Modelled on huggingface/transformers, models/gpt_neox/modeling_gpt_neox.py (GPTNeoXAttention:
# _split_heads / _merge_heads class helpers, _attn with the causal `bias` buffer sliced
# [key_length - query_length : key_length, :key_length] and torch.finfo(...).min, norm_factor,
# RotaryEmbedding / rotate_half / apply_rotary_pos_emb on the first rotary_ndims features):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

MAX_POSITIONS = 2048
ROTARY_PCT = 1.0  # rotary on all of each head's features
ROTARY_EMB_BASE = 10000

# causal mask buffer, as GPTNeoXAttention registers it
bias = np.tril(np.ones((MAX_POSITIONS, MAX_POSITIONS), dtype=bool))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Splits hidden dim into attn_head_size and num_attention_heads"""
    # tensor: [seq_len, hidden_size]
    new_shape = M.shape[:-1] + (num_heads, d_head)
    # -> [seq_len, num_attention_heads, attn_head_size]
    tensor = M.reshape(new_shape)
    # -> [num_attention_heads, seq_len, attn_head_size]
    return tensor.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """Merges attn_head_size dim and num_attn_heads dim into hidden dim"""
    num_attention_heads, seq_len, attn_head_size = H.shape
    # [num_attention_heads, seq_len, attn_head_size] -> [seq_len, num_attention_heads, attn_head_size]
    tensor = H.transpose(1, 0, 2)
    # -> [seq_len, hidden_size]
    return tensor.reshape(seq_len, num_attention_heads * attn_head_size)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query_length, attn_head_size = Q.shape[-2:]
    key_length = K.shape[-2]
    causal_mask = bias[key_length - query_length : key_length, :key_length]

    norm_factor = attn_head_size ** -0.5
    attn_scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * norm_factor
    mask_value = np.finfo(attn_scores.dtype).min
    attn_scores = np.where(causal_mask, attn_scores, mask_value)

    attn_weights = softmax(attn_scores, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def rotate_half(x: np.ndarray) -> np.ndarray:
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return np.concatenate((-x2, x1), axis=-1)


def rotary_emb(dim: int, seq_len: int) -> tuple[np.ndarray, np.ndarray]:
    inv_freq = 1.0 / (ROTARY_EMB_BASE ** (np.arange(0, dim, 2) / dim))
    t = np.arange(seq_len)
    freqs = np.einsum("i,j->ij", t, inv_freq)
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
    hidden_size = X.shape[-1]
    if hidden_size % num_heads != 0:
        raise ValueError(
            f"The hidden size ({hidden_size}) is not divisible by the number of attention heads ({num_heads})"
        )
    head_size = hidden_size // num_heads
    rotary_ndims = int(head_size * ROTARY_PCT)

    query = split_heads(X @ Wq, num_heads, head_size)
    key = split_heads(X @ Wk, num_heads, head_size)
    value = split_heads(X @ Wv, num_heads, head_size)

    # Compute rotary embeddings on rotary_ndims
    query_rot = query[..., :rotary_ndims]
    query_pass = query[..., rotary_ndims:]
    key_rot = key[..., :rotary_ndims]
    key_pass = key[..., rotary_ndims:]

    seq_len = key.shape[-2]
    cos, sin = rotary_emb(rotary_ndims, seq_len)
    query, key = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
    query = np.concatenate((query, query_pass), axis=-1)
    key = np.concatenate((key, key_pass), axis=-1)

    # Compute attention
    attn_output, attn_weights = attention(query, key, value)

    # Reshape outputs
    attn_output = merge_heads(attn_output)
    attn_output = attn_output @ Wo
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                "The hidden size is not divisble by the number of attention heads! Make sure to update them"
            )
        # query_key_value: Linear(hidden, 3 * hidden); dense: Linear(hidden, hidden)
        counts[num_heads] = 3 * d_model * d_model + d_model * d_model
        if bias:
            counts[num_heads] += 3 * d_model + d_model
    return counts
