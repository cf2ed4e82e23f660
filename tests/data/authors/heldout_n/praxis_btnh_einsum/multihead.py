# Modelled on google/praxis (praxis/layers/attentions.py: DotProductAttention with the BTNH
# layout, `AttentionProjection` weights of shape (D, N, H) used as `einsum('BTD,DNH->BTNH')` for
# the inputs and, with `is_output_projection=True`, `einsum('BTNH,DNH->BTD')` for the output,
# `_scale_query` with `per_dim_scale` (softplus(0) * 1.442695041 == 1 at init),
# `_atten_logits` as `einsum('BTNH,BSNH->BNTS')`, `jax.nn.softmax(logits, axis=-1)`,
# `einsum('BNTS,BSNH->BTNH')`) and jax.nn.softmax / jnp.argwhere: written in that style for
# this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

_R_SOFTPLUS_0 = 1.442695041


def _softplus(x):
    return np.logaddexp(x, 0.0)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    unnormalized = np.exp(x - np.max(x, axis, keepdims=True))
    return unnormalized / np.sum(unnormalized, axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """[T, D] -> [T, N, H]."""
    t, d = M.shape
    if d != num_heads * d_head:
        raise ValueError(f"model dims {d} != num_heads {num_heads} * dim_per_head {d_head}")
    return np.reshape(M, (t, num_heads, d_head))


def merge_heads(H: np.ndarray) -> np.ndarray:
    """[T, N, H] -> [T, D]."""
    t = H.shape[0]
    return np.reshape(H, (t, -1))


def _scale_query(query, per_dim_scale=None):
    dim_per_head = query.shape[-1]
    if per_dim_scale is None:
        per_dim_scale = np.zeros((dim_per_head,), dtype=query.dtype)
    r_softplus_0 = _R_SOFTPLUS_0
    scale = r_softplus_0 / np.sqrt(dim_per_head)
    return query * (scale * _softplus(per_dim_scale))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query = _scale_query(Q)
    logits = np.einsum("...th,...sh->...ts", query, K)
    probs = softmax(logits, axis=-1).astype(K.dtype)
    encoded = np.einsum("...ts,...sh->...th", probs, V)
    return encoded, probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    model_dims = X.shape[-1]
    if model_dims % num_heads != 0:
        raise ValueError(f"num_heads {num_heads} must divide model_dims {model_dims}")
    dim_per_head = model_dims // num_heads
    w_q = Wq.reshape(model_dims, num_heads, dim_per_head)
    w_k = Wk.reshape(model_dims, num_heads, dim_per_head)
    w_v = Wv.reshape(model_dims, num_heads, dim_per_head)
    w_post = Wo.reshape(model_dims, num_heads, dim_per_head)  # post: [D, N, H]
    query = np.einsum("TD,DNH->TNH", X, w_q)
    key = np.einsum("TD,DNH->TNH", X, w_k)
    value = np.einsum("TD,DNH->TNH", X, w_v)
    query = _scale_query(query)
    logits = np.einsum("TNH,SNH->NTS", query, key)
    probs = softmax(logits, axis=-1)
    encoded = np.einsum("NTS,SNH->TNH", probs, value)
    output = np.einsum("TNH,DNH->TD", encoded, w_post)
    return output, probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = weights.shape[0]
    diff = np.max(np.abs(weights[:, None] - weights[None, :]), axis=(-2, -1))
    upper = np.triu(diff > atol, k=1)
    return np.argwhere(upper)


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"num_heads {num_heads} must divide model_dims {d_model}")
        dim_per_head = d_model // num_heads
        proj = d_model * num_heads * dim_per_head + (num_heads * dim_per_head if bias else 0)
        post = d_model * num_heads * dim_per_head + (d_model if bias else 0)
        counts[num_heads] = 3 * proj + post
    return counts
