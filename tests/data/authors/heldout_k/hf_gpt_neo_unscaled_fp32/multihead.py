# Modelled on huggingface/transformers, src/transformers/models/gpt_neo/modeling_gpt_neo.py
# (GPTNeoSelfAttention: _split_heads / _merge_heads with `tensor.size()[:-1] + (num_heads,
# attn_head_size)`, _attn that casts query and key to fp32 "to avoid overflow issues", takes
# matmul(query, key.transpose(-1, -2)) and softmaxes it, then casts the weights back to
# value.dtype; the ValueError of __init__ naming embed_dim and num_heads): written in that style
# for this test corpus, not copied. The causal `bias` buffer is left out (the exercise is an
# encoder).
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    x_max = np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x - x_max)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """
    Splits hidden_size dim into attn_head_size and num_heads
    """
    new_shape = M.shape[:-1] + (num_heads, d_head)
    tensor = np.reshape(M, new_shape)
    return np.swapaxes(tensor, -3, -2)  # (head, seq_length, head_features)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """
    Merges attn_head_size dim and num_attn_heads dim into hidden_size
    """
    num_heads, seq_length, attn_head_size = H.shape
    tensor = np.ascontiguousarray(np.swapaxes(H, 0, 1))
    new_shape = tensor.shape[:-2] + (num_heads * attn_head_size,)
    return tensor.reshape(new_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Keep the attention weights computation in fp32 to avoid overflow issues
    query = Q.astype(np.float32)
    key = K.astype(np.float32)

    attn_weights = np.matmul(query, np.swapaxes(key, -1, -2))

    attn_weights = softmax(attn_weights, axis=-1)
    attn_weights = attn_weights.astype(V.dtype)

    attn_output = np.matmul(attn_weights, V)

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
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim} and"
            f" `num_heads`: {num_heads})."
        )

    query = X @ Wq
    key = X @ Wk
    value = X @ Wv

    query = split_heads(query, num_heads, head_dim)
    key = split_heads(key, num_heads, head_dim)
    value = split_heads(value, num_heads, head_dim)

    attn_output, attn_weights = attention(query, key, value)

    attn_output = merge_heads(attn_output)
    attn_output = attn_output @ Wo

    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for num_heads in head_counts:
        attn = nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in attn.parameters())
    return counts
