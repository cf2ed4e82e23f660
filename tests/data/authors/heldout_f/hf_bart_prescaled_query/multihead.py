# Modelled on huggingface/transformers, models/bart/modeling_bart.py (BartAttention: scaling =
# head_dim ** -0.5 applied to q_proj's output, _shape = view(bsz, seq_len, num_heads,
# head_dim).transpose(1, 2), proj_shape = (bsz * num_heads, -1, head_dim) folded for torch.bmm,
# the "embed_dim must be divisible by num_heads" ValueError, Linear(..., bias=bias) with bias=True):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    exp = np.exp(x - x_max)
    return exp / np.sum(exp, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # _shape: (seq_len, embed_dim) -> (seq_len, num_heads, head_dim) -> (num_heads, seq_len, head_dim)
    seq_len, embed_dim = M.shape
    if num_heads * d_head != embed_dim:
        raise ValueError(
            f"embed_dim must be num_heads * head_dim (got `embed_dim`: {embed_dim},"
            f" `num_heads`: {num_heads} and `head_dim`: {d_head})."
        )
    return M.reshape(seq_len, num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    return H.swapaxes(0, 1).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # every leading axis folded into one bmm batch, as BART's proj_shape does
    *lead, tgt_len, head_dim = Q.shape
    src_len = K.shape[-2]
    v_dim = V.shape[-1]
    scaling = head_dim ** -0.5

    query_states = (Q * scaling).reshape(-1, tgt_len, head_dim)
    key_states = K.reshape(-1, src_len, head_dim)
    value_states = V.reshape(-1, src_len, v_dim)

    attn_weights = np.matmul(query_states, key_states.transpose(0, 2, 1))
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, value_states)

    attn_output = attn_output.reshape(*lead, tgt_len, v_dim)
    attn_weights = attn_weights.reshape(*lead, tgt_len, src_len)
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    tgt_len, embed_dim = X.shape
    head_dim = embed_dim // num_heads
    if (head_dim * num_heads) != embed_dim:
        raise ValueError(
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim}"
            f" and `num_heads`: {num_heads})."
        )
    scaling = head_dim ** -0.5

    # get query proj
    query_states = (X @ Wq) * scaling
    key_states = split_heads(X @ Wk, num_heads, head_dim)
    value_states = split_heads(X @ Wv, num_heads, head_dim)
    query_states = split_heads(query_states, num_heads, head_dim)

    attn_output, attn_weights = attention(query_states, key_states, value_states)

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
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"embed_dim must be divisible by num_heads (got `embed_dim`: {d_model}"
                f" and `num_heads`: {num_heads})."
            )
    # q_proj, k_proj, v_proj, out_proj: Linear(embed_dim, embed_dim, bias=bias)
    per_proj = d_model * d_model + (d_model if bias else 0)
    return {num_heads: 4 * per_proj for num_heads in head_counts}
