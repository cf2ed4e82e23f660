# Modelled on pytorch/torchtune, torchtune/modules/attention.py (MultiHeadAttention with
# optional q_norm / k_norm, "normalization layer for query, e.g. RMSNorm", applied per head
# after `q.view(b, s_x, -1, self.head_dim)`; is_causal; the ValueError checks of __init__)
# and torchtune/modules/rms_norm.py (RMSNorm(dim, eps=1e-6), computed in fp32 with a learned
# scale): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    s_x, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(
            f"embed_dim ({embed_dim}) must equal num_heads ({num_heads}) * head_dim ({d_head})"
        )
    # [s_x, n_h, h_d] -> [n_h, s_x, h_d]
    return M.reshape(s_x, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    n_h, s_x, h_d = H.shape
    return H.transpose(1, 0, 2).reshape(s_x, n_h * h_d)


def attention(Q, K, V):
    scale = 1.0 / np.sqrt(Q.shape[-1])
    attn = (Q @ np.swapaxes(K, -2, -1)) * scale
    attn = softmax(attn, axis=-1)
    return attn @ V, attn


def rms_norm(x, eps=1e-6):
    """RMSNorm over the last axis, scale initialised to ones."""
    x_fp32 = x.astype(np.float64)
    x_normed = x_fp32 / np.sqrt(np.mean(x_fp32 ** 2, axis=-1, keepdims=True) + eps)
    return x_normed.astype(x.dtype) * np.ones(x.shape[-1], dtype=x.dtype)


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    embed_dim = X.shape[-1]
    if embed_dim % num_heads != 0:
        raise ValueError(
            f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
        )
    head_dim = embed_dim // num_heads

    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)

    # Normalize q and k per head (q_norm / k_norm), as the newer models do
    q = rms_norm(q)
    k = rms_norm(k)

    output, attn = attention(q, k, v)
    output = merge_heads(output)
    return output @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = weights.shape[0]
    return [
        (i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if not np.allclose(weights[i], weights[j], rtol=1e-5, atol=atol)
    ]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"embed_dim ({d_model}) must be divisible by num_heads ({num_heads})"
            )
        head_dim = d_model // num_heads
        q_proj = d_model * num_heads * head_dim
        k_proj = d_model * num_heads * head_dim
        v_proj = d_model * num_heads * head_dim
        output_proj = num_heads * head_dim * d_model
        total = q_proj + k_proj + v_proj + output_proj
        if bias:
            total += 3 * num_heads * head_dim + d_model
        total += 2 * head_dim  # q_norm.scale, k_norm.scale
        counts[num_heads] = total
    return counts
