# Modelled on TransformerLensOrg/TransformerLens, transformer_lens/components/abstract_attention.py
# and HookedTransformer's conventions (weights kept per head: W_Q, W_K, W_V of shape
# [head_index, d_model, d_head] and W_O of shape [head_index, d_head, d_model]; einsum with
# named axes "pos head_index d_head"; attn_scores / attn_scale, attn_scale = sqrt(d_head);
# the result summed over heads through W_O instead of concatenating z; attention_dir
# "bidirectional" so no causal mask): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    # "pos (head_index d_head) -> head_index pos d_head"
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"last axis is {M.shape[-1]}, expected n_heads * d_head = {num_heads * d_head}")
    pos = M.shape[0]
    return np.einsum("phd->hpd", M.reshape(pos, num_heads, d_head))


def merge_heads(H):
    # "head_index pos d_head -> pos (head_index d_head)"
    n_heads, pos, d_head = H.shape
    return np.einsum("hpd->phd", H).reshape(pos, n_heads * d_head)


def attention(Q, K, V):
    # q: [... query_pos d_head], k: [... key_pos d_head], v: [... key_pos d_head_v]
    attn_scale = np.sqrt(Q.shape[-1])
    attn_scores = np.einsum("...qd,...kd->...qk", Q, K) / attn_scale
    pattern = softmax(attn_scores, axis=-1)
    pattern = np.where(np.isnan(pattern), 0.0, pattern)
    z = np.einsum("...qk,...kd->...qd", pattern, V)
    return z, pattern


def _per_head_in(W, n_heads):
    # [d_model, (head_index d_head)] -> W_Q[head_index, d_model, d_head]
    d_model = W.shape[0]
    return np.einsum("mhd->hmd", W.reshape(d_model, n_heads, -1))


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    d_model = X.shape[-1]
    if d_model % num_heads != 0:
        raise ValueError(f"d_model {d_model} is not divisible by n_heads {num_heads}")
    d_head = d_model // num_heads

    W_Q = _per_head_in(Wq, num_heads)
    W_K = _per_head_in(Wk, num_heads)
    W_V = _per_head_in(Wv, num_heads)
    W_O = Wo.reshape(num_heads, d_head, d_model)  # [head_index, d_head, d_model]

    q = np.einsum("pm,hmd->hpd", X, W_Q)
    k = np.einsum("pm,hmd->hpd", X, W_K)
    v = np.einsum("pm,hmd->hpd", X, W_V)
    z, pattern = attention(q, k, v)  # z: [head_index pos d_head]

    # result per head, then summed over heads (same as merge_heads(z) @ Wo)
    result = np.einsum("hpd,hdm->hpm", z, W_O)
    out = result.sum(axis=0)
    return out, pattern


def distinct_head_pairs(weights, atol=1e-6):
    n_heads = weights.shape[0]
    flat = weights.reshape(n_heads, -1)
    gap = np.max(np.abs(flat[:, None, :] - flat[None, :, :]), axis=-1)
    i, j = np.nonzero(np.triu(gap > atol, k=1))
    return [(int(a), int(b)) for a, b in zip(i, j)]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for n_heads in head_counts:
        if d_model % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} does not divide d_model={d_model}")
        d_head = d_model // n_heads
        # W_Q, W_K, W_V: [n_heads, d_model, d_head]; W_O: [n_heads, d_head, d_model]
        n = 3 * n_heads * d_model * d_head + n_heads * d_head * d_model
        if bias:
            # b_Q, b_K, b_V: [n_heads, d_head]; b_O: [d_model]
            n += 3 * n_heads * d_head + d_model
        counts[n_heads] = n
    return counts
