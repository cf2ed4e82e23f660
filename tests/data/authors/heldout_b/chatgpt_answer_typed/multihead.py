# Modelled on the answers a chat assistant (ChatGPT) gives to "implement multi-head attention in
# NumPy" (type hints, docstrings, a stable softmax, reshape + transpose for the heads, asserts on
# shapes): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax."""
    x_max = np.max(x, axis=axis, keepdims=True)
    e_x = np.exp(x - x_max)
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Split the last dimension into (num_heads, d_head) and transpose."""
    seq_len, d_model = M.shape
    if d_model != num_heads * d_head:
        raise ValueError(
            f"Expected last dimension {num_heads * d_head} (num_heads * d_head), got {d_model}"
        )
    # (seq_len, num_heads, d_head) -> (num_heads, seq_len, d_head)
    return M.reshape(seq_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """Inverse of split_heads."""
    num_heads, seq_len, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(seq_len, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention: softmax(QK^T / sqrt(d_k)) V."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., seq_len_q, seq_len_k)
    attn_weights = softmax(scores, axis=-1)
    output = attn_weights @ V  # (..., seq_len_q, d_v)
    return output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention."""
    seq_len, d_model = X.shape
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError("d_model must be divisible by num_heads")
    d_head = d_model // num_heads

    # Step 1: Linear projections
    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv

    # Step 2: Split into heads
    Q_h = split_heads(Q, num_heads, d_head)
    K_h = split_heads(K, num_heads, d_head)
    V_h = split_heads(V, num_heads, d_head)

    # Step 3: Scaled dot-product attention for each head
    heads_out, attn_weights = attention(Q_h, K_h, V_h)

    # Step 4: Concatenate heads and project
    concat = merge_heads(heads_out)
    output = concat @ Wo
    assert output.shape == (seq_len, d_model)
    return output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    """Pairs of heads whose attention patterns differ by more than atol somewhere."""
    num_heads = weights.shape[0]
    result: list[tuple[int, int]] = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            max_diff = np.max(np.abs(weights[i] - weights[j]))
            if max_diff > atol:
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    """Count parameters of nn.MultiheadAttention for each head count."""
    import torch.nn as nn

    head_counts = list(head_counts)  # allow generators
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"num_heads={h} does not divide d_model={d_model}")
    counts = {}
    for h in head_counts:
        mha = nn.MultiheadAttention(embed_dim=d_model, num_heads=h, bias=bias)
        counts[h] = sum(p.numel() for p in mha.parameters())
    return counts
