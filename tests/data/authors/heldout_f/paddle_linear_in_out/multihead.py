# Modelled on PaddlePaddle/Paddle, python/paddle/nn/layer/transformer.py (MultiHeadAttention:
# _prepare_qkv with tensor.reshape(x=q, shape=[0, 0, num_heads, head_dim]) and
# tensor.transpose(x=q, perm=[0, 2, 1, 3]); product = paddle.matmul(x=q * (head_dim**-0.5), y=k,
# transpose_y=True); F.softmax(product); "combine heads" transpose and reshape; q_proj, k_proj,
# v_proj, out_proj = Linear(..., bias_attr) with a bias by default; paddle.allclose's rtol/atol):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    out = np.exp(x - x_max)
    return out / np.sum(out, axis=axis, keepdims=True)


def matmul(x: np.ndarray, y: np.ndarray, transpose_x: bool = False, transpose_y: bool = False):
    # paddle.matmul: transpose_* swaps the last two dimensions
    if transpose_x:
        x = np.swapaxes(x, -1, -2)
    if transpose_y:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"the last dimension {M.shape[-1]} must be num_heads ({num_heads}) * head_dim ({d_head})"
        )
    q = np.reshape(M, [M.shape[0], num_heads, d_head])
    return np.transpose(q, [1, 0, 2])


def merge_heads(H: np.ndarray) -> np.ndarray:
    out = np.transpose(H, [1, 0, 2])
    return np.reshape(out, [out.shape[0], out.shape[1] * out.shape[2]])


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    product = matmul(Q * (head_dim**-0.5), K, transpose_y=True)
    weights = softmax(product)
    out = matmul(weights, V)
    return out, weights


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
        raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
    q = split_heads(matmul(X, Wq), num_heads, head_dim)
    k = split_heads(matmul(X, Wk), num_heads, head_dim)
    v = split_heads(matmul(X, Wv), num_heads, head_dim)
    # scale dot product attention
    product = matmul(q * (head_dim**-0.5), k, transpose_y=True)
    weights = softmax(product)
    out = matmul(weights, v)
    # combine heads
    out = np.transpose(out, [1, 0, 2])
    out = np.reshape(out, [out.shape[0], out.shape[1] * out.shape[2]])
    out = matmul(out, Wo)
    return out, weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if not np.allclose(weights[i], weights[j], atol=atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"embed_dim ({d_model}) must be divisible by num_heads ({num_heads})")
        # q_proj, k_proj, v_proj, out_proj: Linear(embed_dim, embed_dim) with weight and bias
        counts[num_heads] = 4 * (d_model * d_model + d_model)
    return counts
