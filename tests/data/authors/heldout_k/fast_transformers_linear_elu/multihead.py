# Modelled on idiap/fast-transformers (Katharopoulos et al., "Transformers are RNNs"):
# fast_transformers/attention/linear_attention.py (LinearAttention with elu_feature_map,
# `KV = einsum("nshd,nshm->nhmd", K, values)`, `Z = 1/(einsum("nlhd,nhd->nlh", Q, K.sum(dim=1))
# + self.eps)`, `V = einsum("nlhd,nhmd,nlh->nlhm", Q, KV, Z)`) and
# fast_transformers/attention/attention_layer.py (AttentionLayer: `queries.view(N, L, H, -1)`,
# the inner attention's output `.view(N, L, -1)`, heads kept on the axis after the tokens):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def elu_feature_map(x):
    # elu(x) + 1: x + 1 for x > 0, exp(x) otherwise (always positive)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (L, D) -> (L, H, E), as AttentionLayer's queries.view(N, L, H, -1)
    L = M.shape[0]
    return M.reshape(L, num_heads, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # (L, H, E) -> (L, H*E), as new_values.view(N, L, -1)
    return H.reshape(H.shape[0], -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, eps: float = 1e-6):
    """Linear attention, O(N D^2): normalize(phi(Q) phi(K)^T) V, never forming softmax(QK^T).

    Q: (..., L, D), K: (..., S, D), V: (..., S, M).
    """
    # Apply the feature map to the queries and keys
    Qf = elu_feature_map(Q)
    Kf = elu_feature_map(K)

    # Compute the KV matrix, namely the dot product of keys and values so
    # that we never explicitly compute the attention matrix
    KV = np.einsum("...sd,...sm->...md", Kf, V)

    # Compute the normalizer
    Z = 1 / (np.einsum("...ld,...d->...l", Qf, Kf.sum(axis=-2)) + eps)

    # Finally compute the new values
    out = np.einsum("...ld,...md,...l->...lm", Qf, KV, Z)

    # the exercise also wants the (..., L, S) weights, so build them once here
    A = np.einsum("...ld,...sd->...ls", Qf, Kf) * Z[..., None]
    return out, A


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    L, D = X.shape
    H = num_heads
    if D % H != 0:
        raise ValueError(f"d_model={D} is not divisible by n_heads={H}")
    E = D // H

    # Project the queries/keys/values
    queries = X @ Wq
    keys = X @ Wk
    values = X @ Wv

    # Reshape them into many heads and compute the attention
    q = split_heads(queries, H, E)  # (L, H, E)
    k = split_heads(keys, H, E)
    v = split_heads(values, H, E)
    # attention() batches over leading axes: heads first
    new_values, A = attention(q.transpose(1, 0, 2), k.transpose(1, 0, 2), v.transpose(1, 0, 2))
    new_values = merge_heads(new_values.transpose(1, 0, 2))  # back to (L, H, E) -> (L, D)

    # Project the output and return
    return new_values @ Wo, A


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    H = weights.shape[0]
    gaps = np.abs(weights[:, None] - weights[None, :]).reshape(H, H, -1).max(axis=-1)
    return [(i, j) for i in range(H) for j in range(i + 1, H) if gaps[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if h <= 0 or d_model % h:
            raise ValueError(f"n_heads={h} does not divide d_model={d_model}")
        layer = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in layer.parameters())
    return counts
