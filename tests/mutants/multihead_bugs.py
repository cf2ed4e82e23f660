"""Buggy (and correct) versions of multihead.py functions, written as students might.

A function named ``softmax__hardcoded_axis0`` replaces ``softmax`` in its submission; the other
contract functions stay the reference ones and call it, as a student's would.
"""

from __future__ import annotations

import math

import numpy as np

from solutions.multihead import attention, merge_heads, softmax, split_heads

from .registry import bug, correct

SOFTMAX_ONLY = ("softmax",)
NOT_CROSS_CHECK = ("softmax", "attention", "multi_head_attention")

# --- softmax ------------------------------------------------------------------------------


@bug("softmax-wrong-axis")
def softmax__hardcoded_axis0(x, axis=-1):
    e = np.exp(x - np.max(x, axis=0, keepdims=True))
    return e / np.sum(e, axis=0, keepdims=True)


@bug("softmax-wrong-axis", affects=SOFTMAX_ONLY)  # attention asks for the last axis anyway
def softmax__ignores_axis_loop(x, axis=-1):
    out = np.empty_like(x, dtype=float)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return out


@bug("softmax-unstable", affects=NOT_CROSS_CHECK)  # cross_check's inputs are moderate
def softmax__no_shift(x, axis=-1):
    return np.exp(x) / np.sum(np.exp(x), axis=axis, keepdims=True)


@bug("softmax-unstable", affects=NOT_CROSS_CHECK)
def softmax__no_shift_expand_dims(x, axis=-1):
    e = np.exp(np.asarray(x, dtype=float))
    return np.divide(e, np.expand_dims(e.sum(axis=axis), axis))


@bug("softmax-no-keepdims")
def softmax__amax_without_keepdims(x, axis=-1):
    m = np.amax(x, axis)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


@bug("softmax-no-keepdims", affects=SOFTMAX_ONLY)  # right for the last axis, which attention uses
def softmax__newaxis_sum(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)[..., np.newaxis]


@bug("softmax-global")
def softmax__global_np(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@bug("softmax-global")
def softmax__global_loop(x, axis=-1):
    flat = np.asarray(x, dtype=float).ravel()
    top = max(flat)
    e = [math.exp(v - top) for v in flat]
    total = sum(e)
    return np.array([v / total for v in e]).reshape(np.shape(x))


# --- split_heads -------------------------------------------------------------------------


def _check(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("last axis must be num_heads * d_head")


@bug("split-no-transpose")
def split_heads__np_reshape(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.reshape(M, (num_heads, -1, d_head))


@bug("split-no-transpose")
def split_heads__flat_loop(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    n = M.shape[0]
    flat = M.ravel()
    out = np.empty((num_heads, n, d_head))
    for h in range(num_heads):
        out[h] = flat[h * n * d_head : (h + 1) * n * d_head].reshape(n, d_head)
    return out


@bug("split-interleaved")
def split_heads__strided_slices(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.stack([M[:, h::num_heads] for h in range(num_heads)])


@bug("split-interleaved")
def split_heads__np_transpose(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.transpose(np.reshape(M, (M.shape[0], d_head, num_heads)), (2, 0, 1))


@bug("split-token-axis")
def split_heads__np_split(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.array(np.split(M, num_heads))


@bug("split-token-axis")
def split_heads__row_blocks_loop(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    rows = M.shape[0] // num_heads
    return np.stack([M[h * rows : (h + 1) * rows, :] for h in range(num_heads)])


# --- merge_heads -------------------------------------------------------------------------


@bug("merge-no-transpose")
def merge_heads__np_reshape(H):
    return np.reshape(H, (H.shape[1], -1))


@bug("merge-no-transpose")
def merge_heads__flat_rows_loop(H):
    num_heads, n, d_head = H.shape
    flat = H.flatten()
    out = np.zeros((n, num_heads * d_head))
    for i in range(n):
        out[i] = flat[i * num_heads * d_head : (i + 1) * num_heads * d_head]
    return out


@bug("merge-reversed-heads")
def merge_heads__reversed_concatenate(H):
    return np.concatenate([H[h] for h in reversed(range(H.shape[0]))], axis=-1)


@bug("merge-reversed-heads")
def merge_heads__np_flip(H):
    return np.flip(H, axis=0).transpose(1, 0, 2).reshape(H.shape[1], -1)


# --- attention ---------------------------------------------------------------------------


@bug("scale-missing")
def attention__einsum_unscaled(Q, K, V):
    weights = softmax(np.einsum("...nd,...md->...nm", Q, K), axis=-1)
    return np.einsum("...nm,...mv->...nv", weights, V), weights


@bug("scale-missing")
def attention__matmul_unscaled(Q, K, V):
    weights = softmax(np.matmul(Q, np.swapaxes(K, -1, -2)))
    return np.matmul(weights, V), weights


@bug("scale-not-sqrt")
def attention__einsum_by_dk(Q, K, V):
    scores = np.einsum("...nd,...md->...nm", Q, K) / Q.shape[-1]
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@bug("scale-not-sqrt")
def attention__times_reciprocal_dk(Q, K, V):
    scores = Q @ K.swapaxes(-1, -2) * (1.0 / K.shape[-1])
    weights = softmax(scores)
    return weights @ V, weights


@bug("attention-transpose-v")
def attention__np_matmul_transpose_v(Q, K, V):
    weights = softmax(np.matmul(Q, K) / np.sqrt(Q.shape[-1]), axis=-1)
    return np.matmul(weights, np.transpose(V)), weights


@bug("attention-transpose-v")
def attention__einsum_transpose_v(Q, K, V):
    weights = softmax(np.einsum("...ij,...jk->...ik", Q, K) / np.sqrt(Q.shape[-1]))
    return np.einsum("...ij,...kj->...ik", weights, V), weights


@bug("attention-3d-transpose")
def attention__np_transpose_k(Q, K, V):
    weights = softmax(np.matmul(Q, np.transpose(K)) / np.sqrt(Q.shape[-1]), axis=-1)
    return np.matmul(weights, V), weights


@bug("attention-3d-transpose")
def attention__method_transpose_k(Q, K, V):
    weights = softmax(Q @ K.transpose() * Q.shape[-1] ** -0.5)
    return weights @ V, weights


# --- multi_head_attention ---------------------------------------------------------------


def _check_heads(X, num_heads):
    if X.shape[-1] % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    return X.shape[-1] // num_heads


@bug("mha-no-output-projection")
def multi_head_attention__loop_no_wo(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o, w = attention((X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols])
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=-1), np.stack(weights)


@bug("mha-no-output-projection")
def multi_head_attention__einsum_no_wo(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (np.einsum("nd,de->ne", X, W) for W in (Wq, Wk, Wv))
    out, weights = attention(*(split_heads(m, num_heads, d_head) for m in (q, k, v)))
    return merge_heads(out), weights


@bug("mha-heads-not-split")
def multi_head_attention__single_attention_repeated(X, Wq, Wk, Wv, Wo, num_heads):
    _check_heads(X, num_heads)
    out, w = attention(X @ Wq, X @ Wk, X @ Wv)
    return out @ Wo, np.repeat(w[None], num_heads, axis=0)


@bug("mha-heads-not-split")
def multi_head_attention__inline_full_width(X, Wq, Wk, Wv, Wo, num_heads):
    d_model = X.shape[1]
    _check_heads(X, num_heads)
    Q, K, V = np.dot(X, Wq), np.dot(X, Wk), np.dot(X, Wv)
    w = softmax(np.dot(Q, K.T) / math.sqrt(d_model))
    return np.dot(np.dot(w, V), Wo), np.broadcast_to(w, (num_heads, *w.shape))


@bug("scale-d-model")
def multi_head_attention__loop_sqrt_d_model(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    d_model = X.shape[1]
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        w = softmax(Q[:, cols] @ K[:, cols].T / np.sqrt(d_model), axis=-1)
        outs.append(w @ V[:, cols])
        weights.append(w)
    return np.hstack(outs) @ Wo, np.array(weights)


@bug("scale-d-model")
def multi_head_attention__einsum_sqrt_d_model(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    w = softmax(np.einsum("hnd,hmd->hnm", Qh, Kh) / math.sqrt(X.shape[-1]), axis=-1)
    return merge_heads(np.einsum("hnm,hmd->hnd", w, Vh)) @ Wo, w


# --- distinct_head_pairs ------------------------------------------------------------------


@bug("pairs-relative-tolerance")
def distinct_head_pairs__allclose(weights, atol=1e-6):
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if not np.allclose(weights[i], weights[j], atol=atol):
                pairs.append((i, j))
    return pairs


@bug("pairs-relative-tolerance")
def distinct_head_pairs__isclose_all(weights, atol=1e-6):
    h = weights.shape[0]
    same = [
        [bool(np.isclose(weights[i], weights[j], atol=atol).all()) for j in range(h)]
        for i in range(h)
    ]
    return [(i, j) for i in range(h) for j in range(i + 1, h) if not same[i][j]]


# --- outside the catalogue: lose points, carry no tag -------------------------------------


@bug()
def split_heads__heads_reversed(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)[::-1]


@bug()
def merge_heads__interleaved(H):
    num_heads, n, d_head = H.shape
    return H.transpose(1, 2, 0).reshape(n, num_heads * d_head)


@bug()
def attention__returns_scores(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return softmax(scores, axis=-1) @ V, scores


@bug()
def multi_head_attention__keys_from_wq(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wq, Wv))
    out, weights = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, weights


# --- correct alternatives ------------------------------------------------------------------


@correct
def softmax__float32_loop(x, axis=-1):
    x = np.moveaxis(np.asarray(x, dtype=np.float32), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        e = np.exp(x[idx] - x[idx].max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, axis)


@correct
def attention__einsum(Q, K, V):
    scores = np.einsum("...nd,...md->...nm", Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return np.einsum("...nm,...mv->...nv", weights, V), weights


@correct
def multi_head_attention__loop_over_heads(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o, w = attention((X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols])
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=1) @ Wo, np.stack(weights)


@correct
def multi_head_attention__float32(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    X, Wq, Wk, Wv, Wo = (np.asarray(a, dtype=np.float32) for a in (X, Wq, Wk, Wv, Wo))
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, weights


@correct
def split_heads__loop_slices(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.array([M[:, h * d_head : (h + 1) * d_head] for h in range(num_heads)])


@correct
def merge_heads__concatenate(H):
    return np.concatenate(list(H), axis=-1)


@correct
def softmax__logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - lse)


@correct
def split_heads__array_split(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.stack(np.array_split(M, num_heads, axis=1))


@correct
def merge_heads__hstack_loop(H):
    return np.hstack([H[h] for h in range(H.shape[0])])


@bug()
def softmax__off_by_one_denominator(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / (np.sum(e, axis=axis, keepdims=True) + 1.0)
