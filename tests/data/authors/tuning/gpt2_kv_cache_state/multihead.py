# Modelled on huggingface/transformers, src/transformers/models/gpt2/modeling_gpt2.py (GPT2Attention
# with layer_past / use_cache: past keys and values concatenated in front of the new ones along
# the sequence axis): written in that style for this test corpus, not copied. The student keeps a
# module-level cache that multi_head_attention switches on and nothing ever clears, so attention()
# answers differently depending on what ran before it (hostile: the "laundering" class).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# layer_past: (past_key, past_value), filled when use_cache is on
_cache = {"use_cache": False, "layer_past": None}


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """_split_heads: (seq, num_heads * head_dim) -> (num_heads, seq, head_dim)."""
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"embed_dim {M.shape[-1]} != num_heads * head_dim")
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """_merge_heads: (num_heads, seq, head_dim) -> (seq, num_heads * head_dim)."""
    num_heads, seq, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(seq, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    layer_past = _cache["layer_past"]
    if _cache["use_cache"]:
        if (
            layer_past is not None
            and layer_past[0].shape[:-2] == K.shape[:-2]
            and layer_past[0].shape[-1] == K.shape[-1]
            and layer_past[1].shape[-1] == V.shape[-1]
        ):
            past_key, past_value = layer_past
            K = np.concatenate((past_key, K), axis=-2)
            V = np.concatenate((past_value, V), axis=-2)
        _cache["layer_past"] = (K, V)  # present
    attn_weights = Q @ np.swapaxes(K, -1, -2)
    attn_weights = attn_weights / math.sqrt(K.shape[-1])
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = attn_weights @ V
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    embed_dim = X.shape[-1]
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(
            f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {embed_dim} and "
            f"`num_heads`: {num_heads})."
        )
    _cache["use_cache"] = True  # generation-style: reuse past keys and values
    query = split_heads(X @ Wq, num_heads, head_dim)
    key = split_heads(X @ Wk, num_heads, head_dim)
    value = split_heads(X @ Wv, num_heads, head_dim)
    attn_output, attn_weights = attention(query, key, value)
    attn_output = merge_heads(attn_output)
    return attn_output @ Wo, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"num_heads {h} does not divide embed_dim {d_model}")
        counts[h] = sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h,
                                                                       bias=bias).parameters())
    return counts
