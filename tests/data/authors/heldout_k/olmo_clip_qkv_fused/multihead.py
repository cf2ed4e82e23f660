# Modelled on allenai/OLMo, olmo/model.py (OLMoBlock: `assert config.d_model % config.n_heads == 0`,
# the fused `att_proj` cut by `fused_dims`, `qkv.clamp_(min=-self.config.clip_qkv,
# max=self.config.clip_qkv)` before the split, `q.view(B, T, n_heads, C // n_heads).transpose(1, 2)`,
# `_scaled_dot_product_attention`, `att.transpose(1, 2).contiguous().view(B, T, C)`), with
# clip_qkv = 8.0 as in the OLMo 1.7 configs: written in that style for this test corpus, not
# copied. No rotary embedding (config.rope = False) and no causal mask here.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# Clip QKV to this value when set (OLMo's `clip_qkv`).
CLIP_QKV: float | None = 8.0


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    x = x - x.max(axis=axis, keepdims=True)
    ex = np.exp(x)
    return ex / ex.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # Move head forward to be next to the batch dim.
    # shape: (nh, T, hs)
    T, C = M.shape
    return M.reshape(T, num_heads, C // num_heads).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # Re-assemble all head outputs side-by-side.
    nh, T, hs = H.shape
    return H.transpose(1, 0, 2).reshape(T, nh * hs)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Computes scaled dot product attention on query, key and value tensors."""
    scale_factor = 1 / math.sqrt(Q.shape[-1])
    attn_weight = Q @ np.swapaxes(K, -2, -1) * scale_factor
    attn_weight = softmax(attn_weight, axis=-1)
    return attn_weight @ V, attn_weight


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    T, d_model = X.shape
    assert d_model % num_heads == 0

    # Attention input projection. Projects x -> (q, k, v)
    head_dim = d_model // num_heads
    fused_dims = (d_model, num_heads * head_dim, num_heads * head_dim)
    att_proj = np.concatenate([Wq, Wk, Wv], axis=1)
    qkv = X @ att_proj
    if CLIP_QKV is not None:
        qkv = np.clip(qkv, -CLIP_QKV, CLIP_QKV)
    q, k, v = np.split(qkv, np.cumsum(fused_dims)[:-1], axis=-1)

    q = split_heads(q, num_heads, head_dim)
    k = split_heads(k, num_heads, head_dim)
    v = split_heads(v, num_heads, head_dim)

    att, attn_weights = attention(q, k, v)
    att = merge_heads(att)

    # Apply output projection.
    return att @ Wo, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    out = []
    for i in range(n_heads):
        for j in range(i + 1, n_heads):
            if not np.all(np.abs(weights[i] - weights[j]) <= atol):
                out.append((i, j))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_heads in head_counts:
        if n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) is not divisible by n_heads ({n_heads})")
        # att_proj: d_model -> 3 * d_model, attn_out: d_model -> d_model
        n_params = d_model * 3 * d_model + d_model * d_model
        if bias:  # config.include_bias
            n_params += 3 * d_model + d_model
        counts[n_heads] = n_params
    return counts
