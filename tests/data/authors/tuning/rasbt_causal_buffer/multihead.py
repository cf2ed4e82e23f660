# Modelled on rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (MultiHeadAttention with
# d_out, a registered causal mask buffer, view + transpose(1, 2), keys.transpose(2, 3),
# masked_fill_ and softmax(attn_scores / keys.shape[-1]**0.5)): written in that style for this test
# corpus, not copied. The student keeps the (b, num_tokens, ...) batch axis with b = 1.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

context_length = 1024
# the mask buffer: 1 above the diagonal = future tokens
mask = np.triu(np.ones((context_length, context_length)), k=1)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    exp_x = np.exp(x - x_max)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    num_tokens, d_out = M.shape
    if d_out != num_heads * d_head:
        raise ValueError("d_out must be num_heads * head_dim")
    # Unroll last dim: (num_tokens, d_out) -> (num_tokens, num_heads, head_dim), then transpose
    return M.reshape(num_tokens, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, num_tokens, head_dim = H.shape
    # Combine heads, where self.d_out = self.num_heads * self.head_dim
    return H.transpose(1, 0, 2).reshape(num_tokens, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    num_tokens = Q.shape[-2]
    # Compute scaled dot-product attention (aka self-attention) with a causal mask
    attn_scores = Q @ np.swapaxes(K, 2, 3)  # Dot product for each head
    mask_bool = mask.astype(bool)[:num_tokens, :num_tokens]
    attn_scores[..., mask_bool] = -np.inf
    attn_weights = softmax(attn_scores / K.shape[-1] ** 0.5, axis=-1)
    context_vec = attn_weights @ V
    return context_vec, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    x = X[None]  # add the batch dimension: (b, num_tokens, d_in)
    b, num_tokens, d_in = x.shape
    d_out = Wq.shape[1]
    assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
    head_dim = d_out // num_heads

    keys = x @ Wk  # Shape: (b, num_tokens, d_out)
    queries = x @ Wq
    values = x @ Wv

    # We implicitly split the matrix by adding a `num_heads` dimension
    keys = keys.reshape(b, num_tokens, num_heads, head_dim).transpose(0, 2, 1, 3)
    queries = queries.reshape(b, num_tokens, num_heads, head_dim).transpose(0, 2, 1, 3)
    values = values.reshape(b, num_tokens, num_heads, head_dim).transpose(0, 2, 1, 3)

    attn_scores = queries @ np.swapaxes(keys, 2, 3)
    # Original mask truncated to the number of tokens and converted to boolean
    mask_bool = mask.astype(bool)[:num_tokens, :num_tokens]
    # Use the mask to fill attention scores
    attn_scores[..., mask_bool] = -np.inf
    attn_weights = softmax(attn_scores / keys.shape[-1] ** 0.5, axis=-1)

    # Shape: (b, num_tokens, num_heads, head_dim)
    context_vec = (attn_weights @ values).transpose(0, 2, 1, 3)
    context_vec = context_vec.reshape(b, num_tokens, d_out)
    context_vec = context_vec @ Wo  # optional projection
    return context_vec[0], attn_weights[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    result = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                result.append((i, j))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"d_out={d_model} is not divisible by num_heads={num_heads}")
        mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in mha.parameters())
    return counts
