# Modelled on tinygrad, tinygrad/tensor.py (Tensor.softmax: m = self - self.max(axis, keepdim=True),
# e = m.exp(), e / e.sum(axis, keepdim=True); Tensor.scaled_dot_product_attention(key, value,
# attn_mask=None, dropout_p=0.0, is_causal=False): qk = self @ key.transpose(-2, -1) /
# math.sqrt(self.shape[-1])) and tinygrad's float32 default dtype: written in that style for
# this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = x - x.max(axis=axis, keepdims=True)
    e = np.exp(m)
    ss = e.sum(axis=axis, keepdims=True)
    return e / ss


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"can't split {M.shape[-1]} features into {num_heads} heads of {d_head}")
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return H.transpose(1, 0, 2).reshape(H.shape[1], H.shape[0] * H.shape[2])


def attention(
    Q: np.ndarray, K: np.ndarray, V: np.ndarray, attn_mask=None, dropout_p: float = 0.0,
    is_causal: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    assert dropout_p == 0.0, "no dropout in numpy"
    qk = Q @ np.swapaxes(K, -2, -1) / math.sqrt(Q.shape[-1])
    if is_causal:
        attn_mask = np.tril(np.ones((qk.shape[-2], qk.shape[-1]), dtype=bool))
    if attn_mask is not None:
        if attn_mask.dtype == bool:
            attn_mask = np.where(attn_mask, 0.0, -np.inf)
        qk = qk + attn_mask
    w = softmax(qk, -1)
    return w @ V, w


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    bsz_seqlen, dim = X.shape
    if dim % num_heads != 0:
        raise ValueError(f"dim {dim} must be divisible by n_heads {num_heads}")
    head_dim = dim // num_heads
    xq, xk, xv = (split_heads(X @ w, num_heads, head_dim) for w in (Wq, Wk, Wv))
    attn, w = attention(xq, xk, xv)
    return merge_heads(attn) @ Wo, w


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = weights.shape[0]
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if float(np.abs(weights[i] - weights[j]).max()) > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    ret = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        mha = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        ret[h] = sum(p.numel() for p in mha.parameters())
    return ret
