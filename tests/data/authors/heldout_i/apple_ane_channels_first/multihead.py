# Modelled on apple/ml-ane-transformers, ane_transformers/reference/multihead_attention.py
# (the (B, C, 1, S) channels-first layout for the Neural Engine: projections as 1x1 convs,
# `mh_q = q.split(dim_per_head, dim=1)`, keys transposed to (B, S, 1, C) and split on the last
# axis, per-head einsum('bchq,bkhc->bkhq') * q_normalize_fact, softmax(dim=1) over the keys,
# einsum('bkhq,bchk->bchq') and torch.cat(dim=1)): written in that style for this test corpus,
# not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def _to_bc1s(x: np.ndarray) -> np.ndarray:
    # (..., S, C) -> (..., C, 1, S)
    return np.expand_dims(np.swapaxes(x, -1, -2), -2)


def _from_bc1s(x: np.ndarray) -> np.ndarray:
    # (..., C, 1, S) -> (..., S, C)
    return np.swapaxes(np.squeeze(x, -2), -1, -2)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"{M.shape[-1]} channels cannot be split into {num_heads} heads of {d_head}")
    q = _to_bc1s(M)  # (C, 1, S)
    mh_q = np.split(q, num_heads, axis=0)  # num_heads x (d_head, 1, S)
    return np.stack([_from_bc1s(qi) for qi in mh_q])


def merge_heads(H: np.ndarray) -> np.ndarray:
    attn = [_to_bc1s(hi) for hi in H]  # num_heads x (d_head, 1, S)
    attn = np.concatenate(attn, axis=0)  # (C, 1, S)
    return _from_bc1s(attn)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_qk = Q.shape[-1]
    q_normalize_fact = float(d_qk) ** -0.5
    q = _to_bc1s(Q)  # (..., C, 1, Sq)
    k = np.expand_dims(K, -2)  # (..., Sk, 1, C)
    v = _to_bc1s(V)  # (..., Cv, 1, Sk)
    attn_weights = np.einsum("...chq,...khc->...khq", q, k) * q_normalize_fact
    attn_weights = softmax(attn_weights, axis=-3)  # over the keys
    attn = np.einsum("...khq,...chk->...chq", attn_weights, v)  # (..., Cv, 1, Sq)
    weights = np.swapaxes(np.squeeze(attn_weights, -2), -1, -2)  # (..., Sq, Sk)
    return _from_bc1s(attn), weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    embed_dim = X.shape[-1]
    if embed_dim % num_heads != 0:
        raise ValueError(f"embed_dim {embed_dim} is not divisible by n_head {num_heads}")
    dim_per_head = embed_dim // num_heads
    x = _to_bc1s(X)  # (C, 1, S)

    def conv1x1(w, t):
        # nn.Conv2d(C, C, 1) with weight (out, in, 1, 1) = w.T
        return np.einsum("oc,cis->ois", w.T, t)

    q = _from_bc1s(conv1x1(Wq, x))
    k = _from_bc1s(conv1x1(Wk, x))
    v = _from_bc1s(conv1x1(Wv, x))
    attn, attn_weights = attention(split_heads(q, num_heads, dim_per_head),
                                   split_heads(k, num_heads, dim_per_head),
                                   split_heads(v, num_heads, dim_per_head))
    out = conv1x1(Wo, _to_bc1s(merge_heads(attn)))
    return _from_bc1s(out), attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_head = weights.shape[0]
    rows, cols = np.triu_indices(n_head, k=1)
    gaps = [np.max(np.abs(weights[i] - weights[j])) for i, j in zip(rows, cols)]
    return [(int(i), int(j)) for i, j, g in zip(rows, cols, gaps) if g > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_head in head_counts:
        if d_model % n_head != 0:
            raise ValueError(f"d_model {d_model} is not divisible by n_head {n_head}")
        # q_proj, k_proj, v_proj, out_proj: Conv2d(d_model, d_model, 1) each
        conv = d_model * d_model * 1 * 1 + (d_model if bias else 0)
        counts[n_head] = 4 * conv
    return counts
