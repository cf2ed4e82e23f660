# Modelled on The AI Summer's self-attention-cv (black0017/self-attention-cv,
# self_attention_cv/transformer_vanilla/mhsa.py) and its post "How the Vision Transformer works":
# einops rearrange with the heads last in the packed axis ("b t (d h) -> b h t d"), einsum scores
# "b h i d , b h j d -> b h i j" times dim_head ** -0.5, "b h t d -> b t (h d)" to merge. einops
# patterns written out as reshapes in NumPy for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    z = x - np.max(x, axis=axis, keepdims=True)
    num = np.exp(z)
    return num / np.sum(num, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # rearrange(M, "t (d h) -> h t d", h=num_heads)
    t, dim = M.shape
    if dim != num_heads * d_head:
        raise ValueError(f"dim {dim} != heads {num_heads} * dim_head {d_head}")
    return M.reshape(t, d_head, num_heads).transpose(2, 0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # rearrange(H, "h t d -> t (h d)")
    h, t, d = H.shape
    return H.transpose(1, 0, 2).reshape(t, h * d)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale_factor = Q.shape[-1] ** -0.5
    scaled_dot_prod = np.einsum("...id,...jd->...ij", Q, K) * scale_factor
    attn = softmax(scaled_dot_prod, axis=-1)
    return np.einsum("...ij,...jd->...id", attn, V), attn


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    t, dim = X.shape
    if dim % num_heads != 0:
        raise ValueError("dim must be divisible by heads")
    dim_head = dim // num_heads
    # q, k, v = rearrange(qkv, "t (d h) -> h t d", h=heads)
    q, k, v = (
        (X @ W).reshape(t, dim_head, num_heads).transpose(2, 0, 1) for W in (Wq, Wk, Wv)
    )
    out, attn = attention(q, k, v)
    # rearrange(out, "h t d -> t (h d)")
    out = out.transpose(1, 0, 2).reshape(t, dim)
    return out @ Wo, attn


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = weights.shape[0]
    return [
        (i, j)
        for i in range(heads)
        for j in range(i + 1, heads)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    out = {}
    for heads in head_counts:
        if heads <= 0 or d_model % heads != 0:
            raise ValueError(f"{heads} heads do not divide dim={d_model}")
        dim_head = d_model // heads
        _dim = dim_head * heads
        to_qvk = d_model * _dim * 3 + (_dim * 3 if bias else 0)
        w_0 = _dim * d_model + (d_model if bias else 0)
        out[heads] = to_qvk + w_0
    return out
