# Modelled on microsoft/Swin-Transformer, models/swin_transformer_v2.py (WindowAttention,
# Swin V2's scaled cosine attention: F.normalize(q, dim=-1) @ F.normalize(k, dim=-1)
# .transpose(-2, -1) times exp(clamp(logit_scale, max=log(1 / 0.01))), logit_scale a per-head
# nn.Parameter initialised to log(10); the qkv reshape(B_, N, 3, num_heads, -1).permute(2, 0, 3,
# 1, 4); (attn @ v).transpose(1, 2).reshape(B_, N, C); q_bias and v_bias with zeros for the
# key): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

LOGIT_SCALE_INIT = np.log(10.0)  # torch.log(10 * torch.ones((num_heads, 1, 1)))
LOGIT_SCALE_MAX = np.log(1.0 / 0.01)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    x = np.exp(x)
    return x / x.sum(axis=axis, keepdims=True)


def normalize(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    # F.normalize(x, dim=-1)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, eps)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    N, C = M.shape
    if C != num_heads * d_head:
        raise ValueError(f"dim {C} != num_heads {num_heads} * head_dim {d_head}")
    return M.reshape(N, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, N, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(N, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, k, v = Q, K, V
    # cosine attention
    attn = normalize(q) @ np.swapaxes(normalize(k), -2, -1)
    logit_scale = np.exp(np.minimum(LOGIT_SCALE_INIT, LOGIT_SCALE_MAX))
    attn = attn * logit_scale
    attn = softmax(attn, axis=-1)
    x = attn @ v
    return x, attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    N, C = X.shape
    if C % num_heads != 0:
        raise ValueError(f"dim {C} is not divisible by num_heads {num_heads}")
    qkv_weight = np.concatenate([Wq, Wk, Wv], axis=1)  # self.qkv = nn.Linear(dim, dim * 3)
    qkv = (X @ qkv_weight).reshape(N, 3, num_heads, C // num_heads).transpose(1, 2, 0, 3)
    q, k, v = qkv[0], qkv[1], qkv[2]  # make torchscript happy (cannot use tensor as tuple)
    x, attn = attention(q, k, v)
    x = x.transpose(1, 0, 2).reshape(N, C)
    x = x @ Wo  # self.proj
    return x, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(num_heads, num_heads, -1)
    distinct = diff.max(axis=-1) > atol
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(distinct, k=1)))]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    dim = d_model
    counts = {}
    for num_heads in head_counts:
        if dim % num_heads != 0:
            raise ValueError(f"dim {dim} is not divisible by num_heads {num_heads}")
        n = dim * 3 * dim  # qkv weight
        if bias:
            n += dim  # q_bias
            n += dim  # v_bias (the key has none)
        n += num_heads  # logit_scale: one per head
        n += dim * dim + (dim if bias else 0)  # proj
        counts[num_heads] = n
    return counts
