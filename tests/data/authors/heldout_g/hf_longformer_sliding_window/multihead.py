# Modelled on huggingface/transformers, models/longformer/modeling_longformer.py
# (LongformerSelfAttention: hidden_states.transpose(0, 1) to (seq_len, batch, embed);
# query_vectors /= math.sqrt(self.head_dim); view(seq_len, batch_size, num_heads,
# head_dim).transpose(0, 1); one_sided_attn_window_size = attention_window // 2 and the scores
# outside the window masked with -inf; softmax in float32): written in that style for this test
# corpus, not copied. The chunked band matmuls are written here as a full matmul and a band mask.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

ATTENTION_WINDOW = 2  # config.attention_window[layer_id], small for the toy inputs


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(
            f"The hidden size ({embed_dim}) is not num_heads ({num_heads}) * head_dim ({d_head})"
        )
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, seq_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query_vectors = Q
    query_vectors /= math.sqrt(Q.shape[-1])
    attn_scores = np.matmul(query_vectors, np.swapaxes(K, -1, -2))
    attn_probs = softmax(attn_scores, axis=-1)
    attn_output = np.matmul(attn_probs, V)
    return attn_output, attn_probs


def _sliding_window_mask(seq_len: int, one_sided_attn_window_size: int) -> np.ndarray:
    pos = np.arange(seq_len)
    return np.abs(pos[:, None] - pos[None, :]) > one_sided_attn_window_size


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_len, embed_dim = X.shape
    if embed_dim % num_heads != 0:
        raise ValueError(
            f"The hidden size ({embed_dim}) is not a multiple of the number of attention "
            f"heads ({num_heads})"
        )
    head_dim = embed_dim // num_heads
    one_sided_attn_window_size = ATTENTION_WINDOW // 2

    query_vectors = X @ Wq
    key_vectors = X @ Wk
    value_vectors = X @ Wv

    # normalize query
    query_vectors /= math.sqrt(head_dim)

    query_vectors = query_vectors.reshape(seq_len, num_heads, head_dim).transpose(1, 0, 2)
    key_vectors = key_vectors.reshape(seq_len, num_heads, head_dim).transpose(1, 0, 2)
    value_vectors = value_vectors.reshape(seq_len, num_heads, head_dim).transpose(1, 0, 2)

    attn_scores = np.matmul(query_vectors, key_vectors.transpose(0, 2, 1))
    window_mask = _sliding_window_mask(seq_len, one_sided_attn_window_size)
    attn_scores = np.where(window_mask, -np.inf, attn_scores)

    attn_probs = softmax(attn_scores.astype(np.float32), axis=-1).astype(attn_scores.dtype)
    attn_output = np.matmul(attn_probs, value_vectors)

    attn_output = attn_output.transpose(1, 0, 2).reshape(seq_len, embed_dim)
    return attn_output @ Wo, attn_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"The hidden size ({d_model}) is not a multiple of the number of attention "
                f"heads ({num_heads})"
            )
        # query, key, value and the output dense: nn.Linear(embed_dim, embed_dim)
        counts[num_heads] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts
