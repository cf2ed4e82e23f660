# Modelled on gordicaleksa/pytorch-original-transformer, models/definitions/transformer_model.py
# (MultiHeadedAttention: qkv_nets applied in a list comprehension, .view(...).transpose(1, 2),
# attention() returning the intermediate representations and the attention weights kept for
# visualisation, transpose(1, 2).reshape(...) and out_projection_net): written in that style for
# this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.ndim != 2 or M.shape[-1] != num_heads * d_head:
        raise ValueError(f"can't split {M.shape} into {num_heads} heads of {d_head}")
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    number_of_heads, seq_len, head_dimension = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, number_of_heads * head_dimension)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dimension = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, -2, -1)) / math.sqrt(head_dimension)
    attention_weights = softmax(scores, axis=-1)
    intermediate_token_representations = np.matmul(attention_weights, V)
    return intermediate_token_representations, attention_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    model_dimension = X.shape[-1]
    if num_heads <= 0 or model_dimension % num_heads != 0:
        raise ValueError("Model dimension must be divisible by the number of heads.")
    head_dimension = model_dimension // num_heads
    qkv_nets = (Wq, Wk, Wv)
    query, key, value = [split_heads(X @ net, num_heads, head_dimension) for net in qkv_nets]
    intermediate_token_representations, attention_weights = attention(query, key, value)
    reshaped = merge_heads(intermediate_token_representations)
    token_representations = reshaped @ Wo
    return token_representations, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    number_of_heads = weights.shape[0]
    flat = weights.reshape(number_of_heads, -1)
    return [
        (i, j)
        for i in range(number_of_heads)
        for j in range(i + 1, number_of_heads)
        if np.max(np.abs(flat[i] - flat[j])) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    head_counts = list(head_counts)
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"Model dimension {d_model} is not divisible by {h} heads.")
    return {
        h: sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }
