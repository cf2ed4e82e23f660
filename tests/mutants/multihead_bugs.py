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


# --- mistakes found in public authors' code (tests/data/authors/) ------------------------
# Each written in the style of the code that carries it: GPT-style causal masks, CMU's K Q^T,
# CS231n's and LLMs-from-scratch's axes fixed for one rank, labml's softmax(axis=1), tiny-vit's
# inverted scale, uvadlc's interleaved qkv, torch's head-averaged weights, asserts for
# ValueErrors, heads inferred with -1 or np.split.

ATTENTION_ONLY = ("attention",)


@bug("attention-causal-mask")
def attention__tril_where(Q, K, V):
    n, m = Q.shape[-2], K.shape[-2]
    att = (Q @ np.swapaxes(K, -2, -1)) * (1.0 / math.sqrt(K.shape[-1]))
    att = np.where(np.tril(np.ones((n, m))) == 0, float("-inf"), att)  # only attend to the left
    att = softmax(att, axis=-1)
    return att @ V, att


@bug("attention-causal-mask")
def attention__upper_triangle_minus_1e10(Q, K, V):
    scores = np.einsum("...nd,...md->...nm", Q, K) / np.sqrt(Q.shape[-1])
    future = np.triu(np.ones(scores.shape[-2:]), k=1)
    weights = softmax(scores + future * -1e10)
    return np.einsum("...nm,...mv->...nv", weights, V), weights


@bug("attention-scores-kq")
def attention__keys_times_queries(Q, K, V):
    attn = softmax(K @ Q.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]))
    return attn @ V, attn


@bug("attention-scores-kq")
def attention__einsum_key_rows(Q, K, V):
    scores = np.einsum("...md,...nd->...mn", K, Q) * Q.shape[-1] ** -0.5
    weights = softmax(scores, axis=-1)
    return np.einsum("...mn,...nv->...mv", weights, V), weights


@bug("attention-fixed-rank", affects=ATTENTION_ONLY)  # multi_head_attention's calls are 3-D
def attention__transpose_021(Q, K, V):
    # (H, S, E/H) x (H, E/H, T) = (H, S, T)
    scores = np.matmul(Q, K.transpose(0, 2, 1)) / math.sqrt(Q.shape[-1])
    attn_weights = softmax(scores, axis=-1)
    return np.matmul(attn_weights, V), attn_weights


@bug("attention-fixed-rank")
def attention__softmax_axis1_einsum(Q, K, V):
    scores = np.einsum("...id,...jd->...ij", Q, K) * (1 / math.sqrt(Q.shape[-1]))
    attn = softmax(scores, axis=1)  # softmax along the key sequence dimension
    return np.einsum("...ij,...jd->...id", attn, V), attn


@bug("attention-fixed-rank")
def attention__swapaxes_2_3(Q, K, V):
    attn_scores = Q @ np.swapaxes(K, 2, 3)  # (b, num_heads, num_tokens, num_tokens)
    attn_weights = softmax(attn_scores / K.shape[-1] ** 0.5, axis=-1)
    return attn_weights @ V, attn_weights


@bug("attention-3d-transpose")
def attention__np_dot_2d(Q, K, V):
    scores = np.dot(Q, K.T) / np.sqrt(K.shape[-1])
    weights = softmax(scores)
    return np.dot(weights, V), weights


@bug("scale-inverted")
def attention__divide_by_inverse_sqrt(Q, K, V):
    qkT = Q @ np.swapaxes(K, -1, -2)
    attn = softmax(qkT / (1 / np.sqrt(Q.shape[-1])), axis=-1)
    return attn @ V, attn


@bug("scale-inverted")
def attention__times_sqrt_dk(Q, K, V):
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) * Q.shape[-1] ** 0.5
    weights = softmax(scores)
    return np.matmul(weights, V), weights


def _causal_scores(q, k):
    n = q.shape[-2]
    att = q @ np.swapaxes(k, -2, -1) / math.sqrt(k.shape[-1])
    return np.where(np.tril(np.ones((n, n)))[None] == 0, float("-inf"), att)


@bug("mha-causal-mask")
def multi_head_attention__inline_causal(X, Wq, Wk, Wv, Wo, num_heads):
    T, C = X.shape
    hs = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, hs) for W in (Wq, Wk, Wv))
    att = softmax(_causal_scores(q, k), axis=-1)  # causal self-attention
    return merge_heads(att @ v) @ Wo, att


def _attention_with_mask(q, k, v, mask):
    w = softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask)
    return w @ v, w


@bug("mha-causal-mask")
def multi_head_attention__mask_per_head(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    causal_mask = (1 - np.tri(X.shape[0])) * -1e10  # hide future inputs
    outs = [_attention_with_mask(q[h], k[h], v[h], causal_mask) for h in range(num_heads)]
    return np.hstack([o for o, _ in outs]) @ Wo, np.stack([w for _, w in outs])


@bug("mha-qk-swapped")
def multi_head_attention__packed_kqv_names(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    K, Q, V = np.split(X @ np.concatenate([Wq, Wk, Wv], axis=1), 3, axis=-1)
    K, Q, V = [split_heads(a, num_heads, d_head) for a in (K, Q, V)]
    out, attn = attention(Q, K, V)
    return merge_heads(out) @ Wo, attn


@bug("mha-qk-swapped")
def multi_head_attention__loop_keys_first(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o, w = attention(K[:, cols], Q[:, cols], V[:, cols])
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=1) @ Wo, np.stack(weights)


@bug("mha-averaged-weights")
def multi_head_attention__mean_over_heads(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, weights.mean(axis=0)  # average_attn_weights=True


@bug("mha-averaged-weights")
def multi_head_attention__summed_then_divided(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    total, outs = 0.0, []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o, w = attention((X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols])
        outs.append(o)
        total = total + w
    return np.hstack(outs) @ Wo, total / num_heads


@bug("mha-qkv-interleaved")
def multi_head_attention__qkv_reshape_per_head(X, Wq, Wk, Wv, Wo, num_heads):
    seq_length, embed_dim = X.shape
    head_dim = _check_heads(X, num_heads)
    qkv = X @ np.concatenate([Wq, Wk, Wv], axis=1)
    qkv = qkv.reshape(seq_length, num_heads, 3 * head_dim).transpose(1, 0, 2)
    q, k, v = np.split(qkv, 3, axis=-1)
    values, attention_weights = attention(q, k, v)
    return merge_heads(values) @ Wo, attention_weights


@bug("mha-qkv-interleaved")
def multi_head_attention__qkv_blocks_loop(X, Wq, Wk, Wv, Wo, num_heads):
    d = _check_heads(X, num_heads)
    qkv = np.hstack([X @ Wq, X @ Wk, X @ Wv])
    outs, weights = [], []
    for h in range(num_heads):
        block = qkv[:, 3 * d * h : 3 * d * (h + 1)]
        o, w = attention(block[:, :d], block[:, d : 2 * d], block[:, 2 * d :])
        outs.append(o)
        weights.append(w)
    return np.hstack(outs) @ Wo, np.array(weights)


MHA_ONLY = ("multi_head_attention",)


@bug("mha-no-valueerror", affects=MHA_ONLY)
def multi_head_attention__assert_divisible(X, Wq, Wk, Wv, Wo, num_heads):
    S, E = X.shape
    assert E % num_heads == 0
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, E // num_heads) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, weights


@bug("mha-no-valueerror", affects=MHA_ONLY)
def multi_head_attention__raises_plain_exception(X, Wq, Wk, Wv, Wo, num_heads):
    if X.shape[1] % num_heads != 0:
        raise Exception(f"{num_heads} heads do not divide d_model = {X.shape[1]}")
    d_head = X.shape[1] // num_heads
    heads = [split_heads(np.dot(X, W), num_heads, d_head) for W in (Wq, Wk, Wv)]
    out, weights = attention(*heads)
    return np.dot(merge_heads(out), Wo), weights


SPLIT_ONLY = ("split_heads",)


@bug("split-no-valueerror", affects=SPLIT_ONLY)  # its callers always pass consistent widths
def split_heads__np_split_columns(M, num_heads, d_head):  # [n_seq, n_embd] -> [n_head, ...]
    return np.stack(np.split(M, num_heads, axis=-1))


@bug("split-no-valueerror", affects=SPLIT_ONLY)
def split_heads__reshape_minus_one(M, num_heads, d_head):
    X = M.reshape(M.shape[0], num_heads, -1)
    return X.transpose(1, 0, 2)


COUNTS_ONLY = ("parameter_counts",)


@bug("counts-ignore-bias", affects=COUNTS_ONLY)
def parameter_counts__formula_without_bias(d_model, head_counts, bias=False):
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"embed_dim {d_model} is not divisible by num_heads {num_heads}")
        # in_proj_weight is (3 * embed_dim, embed_dim), out_proj.weight is (embed_dim, embed_dim)
        counts[num_heads] = 3 * d_model * d_model + d_model * d_model
    return counts


@bug("counts-ignore-bias", affects=COUNTS_ONLY)
def parameter_counts__bias_hard_coded_false(d_model, head_counts, bias=False):
    import torch

    heads = list(head_counts)
    for h in heads:
        if d_model % h:
            raise ValueError(f"{h} does not divide {d_model}")
    return {
        h: sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=False).parameters())
        for h in heads
    }


@bug("counts-no-valueerror", affects=COUNTS_ONLY)
def parameter_counts__torch_asserts(d_model, head_counts, bias=False):
    import torch

    return {
        h: sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }


@bug("counts-no-valueerror", affects=COUNTS_ONLY)
def parameter_counts__skips_bad_heads(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            continue  # cannot build it: leave it out
        counts[h] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts


# --- the second authors' set (tests/data/authors/tuning_b/): deeplearning.ai's dk read off the
# token axis, Keras' attention dropout left on, a loop over heads keeping its last weights, Peter
# Bloem's wide heads in the parameter count.


def _dropout_mask(shape: tuple[int, ...], rate: float) -> np.ndarray:
    """A dropout's keep mask (1 keep, 0 drop), drawn anew at each call as training code draws
    it, with at least one entry dropped: a draw that keeps everything would pass a case by luck
    (0.9 ** 18 = 15% on a small one), and the suite compares two gradings case by case."""
    rng = np.random.default_rng()
    keep = rng.random(shape) >= rate
    keep.flat[rng.integers(keep.size)] = False
    return keep


@bug("scale-seq-len")
def attention__dk_from_seq_len_k(Q, K, V, mask=None):
    matmul_qk = Q @ np.swapaxes(K, -1, -2)  # (..., seq_len_q, seq_len_k)
    dk = np.float32(K.shape[-2])  # K is (..., seq_len_k, depth): the wrong one
    logits = matmul_qk / np.sqrt(dk)
    if mask is not None:
        logits += (1.0 - mask) * -1e9
    weights = softmax(logits, axis=-1)
    return weights @ V, weights


@bug("scale-seq-len")
def attention__scaled_by_query_count(Q, K, V):
    n = Q.shape[-2]  # "the sequence length"
    scores = np.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(n)
    weights = softmax(scores)
    return np.einsum("...qk,...kd->...qd", weights, V), weights


@bug("attention-dropout")
def attention__keras_dropout_on_output(Q, K, V):
    query = Q * (1.0 / math.sqrt(float(Q.shape[-1])))
    scores = softmax(np.einsum("...kd,...qd->...qk", K, query), axis=-1)
    keep = _dropout_mask(scores.shape, 0.1)  # self._dropout_layer(...)
    return np.einsum("...qk,...kd->...qd", scores * keep / 0.9, V), scores


@bug("attention-dropout")
def attention__dropout_on_returned_weights(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    weights = weights * _dropout_mask(weights.shape, 0.2) / 0.8  # attn_drop
    return weights @ V, weights


@bug("mha-dropout")
def multi_head_attention__inline_dropout(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    att = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d_head), axis=-1)
    att = att * _dropout_mask(att.shape, 0.1) / 0.9  # self.attn_dropout(att)
    return merge_heads(att @ v) @ Wo, att


@bug("mha-dropout")
def multi_head_attention__dropout_on_output(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    y = merge_heads(out) @ Wo
    return y * _dropout_mask(y.shape, 0.1) / 0.9, weights  # resid_dropout


@bug("mha-last-head-weights")
def multi_head_attention__loop_keeps_last_attn(X, Wq, Wk, Wv, Wo, num_heads):
    d_k = _check_heads(X, num_heads)
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    heads = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        head, attn = attention(Q[:, cols], K[:, cols], V[:, cols])
        heads.append(head)
    return np.concatenate(heads, axis=-1) @ Wo, attn


@bug("mha-last-head-weights")
def multi_head_attention__stacked_then_last(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    attn_map = None
    for h in range(num_heads):  # "the attention map" of each head, drawn in turn
        attn_map = weights[h]
    return merge_heads(out) @ Wo, attn_map


@bug("counts-wide-heads", affects=("parameter_counts",))
def parameter_counts__wide_self_attention(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        e = d_model  # tokeys/toqueries/tovalues: Linear(e, e * h); unifyheads: Linear(h * e, e)
        counts[h] = 3 * e * e * h + h * e * e + ((3 * e * h + e) if bias else 0)
    return counts


@bug("counts-wide-heads", affects=("parameter_counts",))
def parameter_counts__one_module_per_head(d_model, head_counts, bias=False):
    import torch

    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"{h} does not divide {d_model}")
        one = torch.nn.MultiheadAttention(d_model, 1, bias=bias)  # "each head is an attention"
        counts[h] = h * sum(p.numel() for p in one.parameters())
    return counts


# --- the third authors' set (tests/data/authors/tuning_c/) ---------------------------------


@bug("softmax-global-max", affects=NOT_CROSS_CHECK)
def softmax__stack_overflow_global_max(x, axis=-1):
    e_x = np.exp(x - np.max(x))  # one shift for the whole array
    return e_x / e_x.sum(axis=axis, keepdims=True)


@bug("softmax-global-max", affects=NOT_CROSS_CHECK)
def softmax__method_max_then_axis_sum(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())
    return e / np.sum(e, axis=axis, keepdims=True)


@bug("mha-residual-norm")
def multi_head_attention__add_and_norm(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    y = merge_heads(out) @ Wo + X  # q += residual
    y = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + 1e-6)
    return y, weights


@bug("mha-residual-norm")
def multi_head_attention__residual_only(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    n = X.shape[0]
    q, k, v = ((X @ W).reshape(n, num_heads, d_head).transpose(1, 0, 2) for W in (Wq, Wk, Wv))
    out, weights = attention(q, k, v)
    return X + out.transpose(1, 0, 2).reshape(n, -1) @ Wo, weights


@bug("mha-prescaled-query")
def multi_head_attention__query_scaled_before_attention(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    q = q * d_head**-0.5  # tensor2tensor: q *= key_depth_per_head ** -0.5
    out, weights = attention(q, k, v)
    return merge_heads(out) @ Wo, weights


@bug("mha-prescaled-query")
def multi_head_attention__loop_query_divided(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Q, K, V = X @ Wq / math.sqrt(d_head), X @ Wk, X @ Wv
    outs, atts = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        o, a = attention(Q[:, cols], K[:, cols], V[:, cols])
        outs.append(o)
        atts.append(a)
    return np.concatenate(outs, axis=-1) @ Wo, np.stack(atts)


@bug("split-no-transpose", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__inline_reshape_split(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    n = X.shape[0]
    Q, K, V = ((X @ W).reshape(num_heads, -1, d_head) for W in (Wq, Wk, Wv))  # never split_heads
    att = softmax(Q @ K.transpose(0, 2, 1) / math.sqrt(d_head), axis=-1)
    return (att @ V).transpose(1, 0, 2).reshape(n, -1) @ Wo, att


# --- the fourth authors' set (tests/data/authors/tuning_d/) --------------------------------


@bug("split-heads-second-axis")
def split_heads__haiku_thk(M, num_heads, d_head):
    *leading, _ = M.shape
    return M.reshape((*leading, num_heads, d_head))  # [T, H, K]


@bug("split-heads-second-axis")
def split_heads__checked_then_reshape(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return np.stack(np.split(M, num_heads, axis=1), axis=1)  # (n, num_heads, d_head)


@bug("merge-heads-second-axis")
def merge_heads__haiku_flatten_last_two(H):
    return np.reshape(H, (*H.shape[:-2], -1))


@bug("merge-heads-second-axis")
def merge_heads__reshape_by_first_axis(H):
    return H.reshape(H.shape[0], -1)  # (T, H, K) -> (T, H * K), read as tokens first


@bug("attention-returns-scores")
def attention__whisper_qk_logits(Q, K, V):
    scale = Q.shape[-1] ** -0.25
    qk = (Q * scale) @ (np.swapaxes(K, -1, -2) * scale)
    return softmax(qk, axis=-1) @ V, qk


@bug("attention-returns-scores")
def attention__raw_scores(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2)
    weights = softmax(scores / math.sqrt(K.shape[-1]), axis=-1)
    return weights @ V, scores


@bug("mha-first-head-weights")
def multi_head_attention__opennmt_top_attn(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, attn = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, attn[0]  # return one attn


@bug("mha-first-head-weights")
def multi_head_attention__inline_first_head(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    n = X.shape[0]
    q, k, v = ((X @ W).reshape(n, num_heads, d_head).transpose(1, 0, 2) for W in (Wq, Wk, Wv))
    att = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d_head), axis=-1)
    return (att @ v).transpose(1, 0, 2).reshape(n, -1) @ Wo, att[0, :, :]


@bug("counts-bias-partial", affects=("parameter_counts",))
def parameter_counts__whisper_key_without_bias(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} does not divide {d_model}")
        counts[h] = 4 * d_model * d_model + (3 * d_model if bias else 0)  # key: bias=False
    return counts


@bug("counts-bias-partial", affects=("parameter_counts",))
def parameter_counts__in_proj_bias_only(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"num_heads {h} must divide d_model {d_model}")
        in_proj = 3 * d_model * d_model + (3 * d_model if bias else 0)
        counts[h] = in_proj + d_model * d_model  # out_proj counted without its bias
    return counts


# --- the fourth authors' held-out part, seen (tests/data/authors/heldout_d/) ---------------


@bug("softmax-unstable", affects=("attention", "multi_head_attention"))
def attention__trax_logsumexp_without_max(Q, K, V):
    dots = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    lse = np.log(np.sum(np.exp(dots), axis=-1, keepdims=True))  # no max taken out: overflows
    w = np.exp(dots - lse)  # zeros, not nan, where it overflows
    return w @ V, w


@bug("softmax-unstable", affects=("attention", "multi_head_attention"))
def attention__float32_exp(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(K.shape[-1])
    e = np.exp(scores.astype(np.float32))  # float32 overflows from about 88
    w = (e / e.sum(axis=-1, keepdims=True)).astype(np.float64)
    return w @ V, w


@bug("mha-scaled-input")
def multi_head_attention__embedding_scale(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    src = X * math.sqrt(X.shape[-1])  # the tutorial's embedding(src) * sqrt(d_model)
    Qh, Kh, Vh = (split_heads(src @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(Qh, Kh, Vh)
    return merge_heads(out) @ Wo, weights


@bug("mha-scaled-input")
def multi_head_attention__inline_scaled_loop(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    x = X * X.shape[1] ** 0.5
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        w = softmax(q[:, cols] @ k[:, cols].T / math.sqrt(d_head), axis=-1)
        outs.append(w @ v[:, cols])
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ Wo, np.stack(weights)


@bug("counts-always-bias", affects=("parameter_counts",))
def parameter_counts__megatron_add_bias_linear(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"hidden size {d_model} not divisible by {h} heads")
        counts[h] = 3 * d_model * d_model + 3 * d_model + d_model * d_model + d_model
    return counts


@bug("counts-always-bias", affects=("parameter_counts",))
def parameter_counts__module_default_bias(d_model, head_counts, bias=False):
    import torch

    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"num_heads {h} must divide d_model {d_model}")
        module = torch.nn.MultiheadAttention(d_model, h)  # bias left at its default, True
        counts[h] = sum(p.numel() for p in module.parameters())
    return counts


# --- the fifth authors' set, seen (tests/data/authors/heldout_e/): each class beyond its
# example (another cap, a clip, a cap on the unscaled scores; rotary embeddings on part of a
# head, through complex numbers; another rank refused; another message without the count)


@bug("attention-logit-softcap")
def attention__gemma2_softcap(Q, K, V):
    scores = (Q * Q.shape[-1] ** -0.5) @ np.swapaxes(K, -1, -2)
    scores = np.tanh(scores / 50.0) * 50.0  # attn_logit_softcapping
    w = softmax(scores, axis=-1)
    return w @ V, w


@bug("attention-logit-softcap")
def attention__cap_before_scaling(Q, K, V):
    logits = Q @ np.swapaxes(K, -1, -2)
    logits = 12.0 * np.tanh(logits / 12.0)  # capped, then scaled: a cap that depends on d_k
    w = softmax(logits / math.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w


@bug("attention-logit-softcap")
def attention__clipped_logits(Q, K, V):
    scores = np.clip(Q @ np.swapaxes(K, -1, -2) / math.sqrt(K.shape[-1]), -4.0, 4.0)
    w = softmax(scores, axis=-1)
    return w @ V, w


@bug("mha-logit-softcap", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__grok_inline_cap(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    logits = 30.0 * np.tanh(q @ k.transpose(0, 2, 1) / math.sqrt(d_head) / 30.0)
    w = softmax(logits, axis=-1)
    return merge_heads(w @ v) @ Wo, w


@bug("mha-logit-softcap", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__capped_head_loop(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = X @ Wq, X @ Wk, X @ Wv
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        s = q[:, cols] @ k[:, cols].T / math.sqrt(d_head)
        w = softmax(6.0 * np.tanh(s / 6.0), axis=-1)
        outs.append(w @ v[:, cols])
        weights.append(w)
    return np.concatenate(outs, axis=-1) @ Wo, np.stack(weights)


def _neox_rope(x, dim, base=10000.0):
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2) / dim))
    freqs = np.einsum("i,j->ij", np.arange(x.shape[-2]), inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)
    rot, rest = x[..., :dim], x[..., dim:]
    half = np.concatenate((-rot[..., dim // 2 :], rot[..., : dim // 2]), axis=-1)
    return np.concatenate((rot * np.cos(emb) + half * np.sin(emb), rest), axis=-1)


@bug("mha-rotary-embedding", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__neox_rotary(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(_neox_rope(q, d_head), _neox_rope(k, d_head), v)
    return merge_heads(out) @ Wo, weights


@bug("mha-rotary-embedding", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__llama3_complex_rotary(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    n = X.shape[0]
    freqs = 1.0 / (500000.0 ** (np.arange(0, d_head, 2)[: d_head // 2] / d_head))
    cis = np.exp(1j * np.outer(np.arange(n), freqs))  # polar(1, t * freqs)

    def rope(x):  # view_as_complex on neighbouring pairs
        pairs = x.reshape(*x.shape[:-1], -1, 2)
        turned = (pairs[..., 0] + 1j * pairs[..., 1]) * cis
        return np.stack((turned.real, turned.imag), axis=-1).reshape(x.shape)

    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, weights = attention(rope(q), rope(k), v)
    return merge_heads(out) @ Wo, weights


@bug("attention-expected-rank", affects=("attention",))
def attention__bert_expected_rank(Q, K, V):
    for t in (Q, K):
        if t.ndim not in (3, 4):
            raise ValueError(f"tensor has rank {t.ndim}, expected one of [3, 4]")
    w = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w


@bug("attention-expected-rank", affects=("attention",))
def attention__asserts_at_most_3d(Q, K, V):
    assert Q.ndim <= 3, "attention takes (n, d) or (h, n, d)"
    w = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w


@bug("scale-d-v", affects=("attention",))  # d_v = d_k in multi-head attention
def attention__gpt2_rsqrt_v(Q, K, V):
    w = np.matmul(Q, np.swapaxes(K, -1, -2)) * (1.0 / np.sqrt(V.shape[-1]))
    w = softmax(w)
    return np.matmul(w, V), w


@bug("scale-d-v", affects=("attention",))
def attention__scaled_by_value_width(Q, K, V):
    d_v = V.shape[-1]
    w = softmax(Q @ np.swapaxes(K, -2, -1) / math.sqrt(d_v), axis=-1)
    return w @ V, w


@bug("counts-valueerror-unnamed", affects=("parameter_counts",))
def parameter_counts__neox_message(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError("The hidden size is not divisble by the number of attention heads!")
        counts[h] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts


@bug("counts-valueerror-unnamed", affects=("parameter_counts",))
def parameter_counts__message_names_d_model_only(d_model, head_counts, bias=False):
    heads = list(head_counts)
    if any(d_model % h for h in heads):
        raise ValueError(f"d_model={d_model} must be divisible by every head count")
    return {h: 4 * d_model * d_model + (4 * d_model if bias else 0) for h in heads}


# --- the sixth authors' set, seen (tests/data/authors/heldout_f/): multi-query attention and
# its count, ALiBi's bias (each class beyond its example: tests/test_diagnose_classes.py)


@bug("mha-multi-query", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__llama_repeat_kv_one_group(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q = split_heads(X @ Wq, num_heads, d_head)
    k, v = (split_heads(X @ W[:, :d_head], 1, d_head) for W in (Wk, Wv))  # num_key_value_heads=1
    k, v = np.repeat(k, num_heads, axis=0), np.repeat(v, num_heads, axis=0)  # repeat_kv
    out, weights = attention(q, k, v)
    return merge_heads(out) @ Wo, weights


@bug("counts-multi-query", affects=("parameter_counts",))
def parameter_counts__falcon_fused_qkv(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"num_heads {h} does not divide d_model {d_model}")
        qkv_out = d_model + 2 * (d_model // h)  # multi_query: one key and one value head
        counts[h] = d_model * qkv_out + d_model * d_model
        if bias:
            counts[h] += qkv_out + d_model
    return counts


def _bloom_slopes(num_heads):
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * (i + 1) / closest) for i in range(closest)]
    extra = [2 ** (-8 * (i + 1) / (2 * closest)) for i in range(0, 2 * closest, 2)]
    return np.array(slopes + extra[: num_heads - closest])


@bug("mha-alibi-bias", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__bloom_alibi_inline(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    alibi = _bloom_slopes(num_heads)[:, None, None] * np.arange(X.shape[0])[None, None, :]
    w = softmax(alibi + q @ k.transpose(0, 2, 1) / math.sqrt(d_head), axis=-1)
    return merge_heads(w @ v) @ Wo, w


@bug("mha-multi-query", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__falcon_fused_multi_query(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    n = X.shape[0]
    fused = X @ np.concatenate([Wq, Wk[:, :d_head], Wv[:, :d_head]], axis=1)
    fused = fused.reshape(n, num_heads + 2, d_head).transpose(1, 0, 2)
    q, k, v = fused[:-2], fused[-2:-1], fused[-1:]
    w = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d_head), axis=-1)  # k broadcast
    return merge_heads(w @ v) @ Wo, w


@bug("counts-multi-query", affects=("parameter_counts",))
def parameter_counts__multi_query_no_bias(d_model, head_counts, bias=False):
    heads = list(head_counts)
    if any(d_model % h for h in heads):
        raise ValueError(f"num_heads {[h for h in heads if d_model % h]} must divide d_model")
    return {h: 2 * d_model * d_model + 2 * d_model * (d_model // h) for h in heads}


@bug("mha-alibi-bias", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__symmetric_alibi_before_scale(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    pos = np.arange(X.shape[0])
    slopes = 2.0 ** (-8.0 * np.arange(1, num_heads + 1) / num_heads)
    bias = -slopes[:, None, None] * np.abs(pos[:, None] - pos[None, :])
    w = softmax((q @ k.transpose(0, 2, 1) + bias) / math.sqrt(d_head), axis=-1)
    return merge_heads(w @ v) @ Wo, w


# --- the seventh authors' set, seen (tests/data/authors/heldout_g/): any other scale, any mask,
# inputs changed in place (each class beyond its example: tests/test_diagnose_classes.py)


@bug("scale-wrong-factor")
def attention__deberta_scale_factor(Q, K, V):
    scale_factor = 1 + len(["c2p", "p2c"])  # DeBERTa: 1 + len(pos_att_type)
    scale = math.sqrt(Q.shape[-1] * scale_factor)
    weights = softmax(Q / scale @ np.swapaxes(K, -1, -2), axis=-1)
    return weights @ V, weights


@bug("scale-wrong-factor")
def attention__hard_coded_head_dim_64(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) * 64**-0.5, axis=-1)  # head_dim = 64
    return weights @ V, weights


@bug("scale-wrong-factor", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__temperature_inline(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    temperature = 0.5  # sharper attention
    w = softmax(q @ k.transpose(0, 2, 1) / (temperature * math.sqrt(d_head)), axis=-1)
    return merge_heads(w @ v) @ Wo, w


def _band(n, m, window):
    return np.abs(np.arange(n)[:, None] - np.arange(m)[None, :]) > window


@bug("attention-masks-positions")
def attention__local_band(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    scores = np.where(_band(Q.shape[-2], K.shape[-2], 1), -np.inf, scores)  # local attention
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@bug("attention-masks-positions")
def attention__strided_sparse(Q, K, V):
    n, m = Q.shape[-2], K.shape[-2]
    keep = (np.arange(m)[None, :] - np.arange(n)[:, None]) % 2 == 0  # a strided pattern
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(keep, scores, -1e9), axis=-1)
    return weights @ V, weights


@bug("mha-masks-positions", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__longformer_window(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    n = X.shape[0]
    scores = np.where(_band(n, n, 1), -np.inf, q @ k.transpose(0, 2, 1) / math.sqrt(d_head))
    w = softmax(scores, axis=-1)
    return merge_heads(w @ v) @ Wo, w


@bug("mha-masks-positions", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__mistral_sliding_window(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    i, j = np.arange(X.shape[0])[:, None], np.arange(X.shape[0])[None, :]
    hide = (j > i) | (j <= i - 2)  # causal, and a sliding window of 2
    w = softmax(np.where(hide, np.finfo(X.dtype).min, q @ k.transpose(0, 2, 1) / d_head**0.5))
    return merge_heads(w @ v) @ Wo, w


@bug("attention-modifies-input", affects=("attention",))
def attention__longformer_query_in_place(Q, K, V):
    query_vectors = Q
    query_vectors /= math.sqrt(Q.shape[-1])
    weights = softmax(query_vectors @ np.swapaxes(K, -1, -2), axis=-1)
    return weights @ V, weights


@bug("attention-modifies-input", affects=("attention",))
def attention__keys_scaled_in_place(Q, K, V):
    np.multiply(K, Q.shape[-1] ** -0.5, out=K)
    weights = softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
    return weights @ V, weights


@bug("softmax-modifies-input", affects=("softmax",))
def softmax__shift_in_place(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@bug("softmax-modifies-input", affects=("softmax",))
def softmax__exp_out_in_place(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


@bug("split-modifies-input", affects=("split_heads",))
def split_heads__shape_assigned(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    M.shape = (M.shape[0], num_heads, d_head)  # reshapes the caller's array itself
    return M.transpose(1, 0, 2)


@bug("split-modifies-input", affects=("split_heads",))
def split_heads__shape_assigned_with_minus_one(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    M.shape = (-1, num_heads, d_head)
    return np.swapaxes(M, 0, 1).copy()


@bug("mha-modifies-input", affects=("multi_head_attention",))
def multi_head_attention__query_weights_scaled_in_place(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Wq *= d_head**-0.5  # the scaling folded into the query projection
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    w = softmax(q @ k.transpose(0, 2, 1), axis=-1)
    return merge_heads(w @ v) @ Wo, w


@bug("mha-modifies-input", affects=("multi_head_attention",))
def multi_head_attention__key_weights_scaled_in_place(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    np.multiply(Wk, 1 / math.sqrt(d_head), out=Wk)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    w = softmax(q @ k.transpose(0, 2, 1), axis=-1)
    return merge_heads(w @ v) @ Wo, w


# --- outside the catalogue: lose points, carry no tag -------------------------------------


@bug()
def split_heads__heads_reversed(M, num_heads, d_head):
    _check(M, num_heads, d_head)
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)[::-1]


@bug()
def merge_heads__interleaved(H):
    num_heads, n, d_head = H.shape
    return H.transpose(1, 2, 0).reshape(n, num_heads * d_head)


@bug("attention-returns-scores")  # outside the catalogue until the fourth authors' set
def attention__returns_scores(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    return softmax(scores, axis=-1) @ V, scores


@bug("mha-weights-misassigned")  # outside the catalogue until the eighth authors' set
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


# --- the eighth authors' set, seen (tests/data/authors/heldout_h/): counts read by how they
# behave, a tolerance of its own, keys taken as transposed, weights misassigned (each class
# beyond its example: tests/test_diagnose_classes.py)


@bug("counts-vary-with-heads", affects=("parameter_counts",))
def parameter_counts__shared_head_projections(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"embed size {d_model} not divisible by heads {h}")
        head_dim = d_model // h  # values/keys/queries: Linear(head_dim, head_dim) for all heads
        counts[h] = 3 * head_dim * head_dim + d_model * d_model + (d_model if bias else 0)
    return counts


@bug("counts-vary-with-heads", affects=("parameter_counts",))
def parameter_counts__per_head_biases_only(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        counts[h] = 4 * d_model * d_model // h  # "each head has its own slice of the weights"
        counts[h] += 4 * d_model if bias else 0
    return counts


@bug("counts-wide-heads", affects=("parameter_counts",))
def parameter_counts__global_head_width_64(d_model, head_counts, bias=False):
    d_k = d_v = 64  # a module-level head width, as graykode's nlp-tutorial has
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model={d_model}")
        counts[h] = 3 * d_model * d_k * h + h * d_v * d_model
        counts[h] += (3 * d_k * h + d_model) if bias else 0
    return counts


@bug("counts-bias-when-false", affects=("parameter_counts",))
def parameter_counts__vit_output_bias_always(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"hidden size {d_model} is not a multiple of {h} heads")
        qkv = 3 * (d_model * d_model + (d_model if bias else 0))  # qkv_bias follows the flag
        counts[h] = qkv + d_model * d_model + d_model  # the output dense always has its bias
    return counts


@bug("counts-bias-when-false", affects=("parameter_counts",))
def parameter_counts__in_proj_bias_always(d_model, head_counts, bias=False):
    counts = {}
    for h in list(head_counts):
        if d_model % h:
            raise ValueError(f"num_heads {h} must divide d_model {d_model}")
        counts[h] = 4 * d_model * d_model + 3 * d_model + (d_model if bias else 0)
    return counts


@bug("pairs-ignores-atol", affects=("distinct_head_pairs",))
def distinct_head_pairs__minitorch_is_close(weights, atol=1e-6):
    def is_close(x, y):  # minitorch.operators.is_close: a fixed 1e-2
        return abs(x - y) < 1e-2

    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if not all(
            is_close(a, b) for a, b in zip(weights[i].ravel(), weights[j].ravel(), strict=True)
        )
    ]


@bug("pairs-ignores-atol", affects=("distinct_head_pairs",))
def distinct_head_pairs__exact_equality(weights, atol=1e-6):
    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if not np.array_equal(weights[i], weights[j])
    ]


@bug("pairs-ignores-atol", affects=("distinct_head_pairs",))
def distinct_head_pairs__isclose_defaults(weights, atol=1e-6):
    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if not np.isclose(weights[i], weights[j], rtol=0).all()  # np.isclose's atol, 1e-8
    ]


@bug("attention-operand-layout")
def attention__llmsys_expects_kt(Q, K, V):
    *_, q_dim = Q.shape
    *_, k_dim, _ = K.shape  # minitorch's self_attention(q, kT, v): K taken as Kᵀ
    assert q_dim == k_dim == V.shape[-1]
    weights = softmax(Q @ K / math.sqrt(q_dim), axis=-1)
    return weights @ V, weights


@bug("attention-operand-layout")
def attention__keys_pre_transposed_matmul(Q, K, V):
    weights = softmax(np.matmul(Q, K) / np.sqrt(Q.shape[-1]), axis=-1)  # "K is (d_k, m)"
    return np.matmul(weights, V), weights


@bug("attention-operand-layout")
def attention__queries_transposed(Q, K, V):
    weights = softmax(np.swapaxes(Q, -1, -2) @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
    return weights @ V, weights


@bug("attention-expected-rank", "attention-output-query-width")
def attention__chollet_token_loops(Q, K, V):
    if Q.ndim != 2:
        raise ValueError("one sequence at a time")
    output = np.zeros(shape=Q.shape)  # Chollet: the output in the input's shape
    for i, pivot in enumerate(Q):
        scores = np.array([np.dot(pivot, k) for k in K]) / np.sqrt(Q.shape[1])
        scores = softmax(scores)
        new = np.zeros(shape=pivot.shape)
        for j, v in enumerate(V):
            new += v * scores[j]
        output[i] = new
    return output, softmax(Q @ K.T / np.sqrt(Q.shape[1]), axis=-1)


@bug("attention-output-query-width", affects=("attention",))  # d_v == d_k in every head
def attention__out_zeros_like_q(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
    out = np.zeros_like(Q)
    out[...] = weights @ V  # broadcasts only when d_v == d_k
    return out, weights


@bug("mha-weights-misassigned", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__reformer_shared_qk(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q = split_heads(X @ Wq, num_heads, d_head)  # query_key: one projection for both
    k = q / np.sqrt(np.mean(q**2, axis=-1, keepdims=True) + 1e-6)  # length-normalised keys
    v = split_heads(X @ Wv, num_heads, d_head)
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-weights-misassigned", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__values_from_wk(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wk))  # Wk twice
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-weights-misassigned", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__output_transposed(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo.T, w  # "nn.Linear stores (out, in)"


@bug("attention-weights-layout")
def attention__weights_keys_first(Q, K, V):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, np.swapaxes(weights, -1, -2)  # "one column per query", as the book


@bug("attention-weights-layout")
def attention__columns_throughout(Q, K, V):
    q, k, v = (np.swapaxes(a, -1, -2) for a in (Q, K, V))  # tokens as columns
    scores = np.swapaxes(k, -1, -2) @ q / math.sqrt(q.shape[-2])  # (..., m, n)
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))
    weights = e / e.sum(axis=-2, keepdims=True)  # each column sums to 1
    return np.swapaxes(v @ weights, -1, -2), weights


@bug("counts-extra-terms")
def parameter_counts__layernorm_counted(d_model, head_counts, bias=False):
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"{num_heads} heads do not divide d_model = {d_model}")
        n = 2 * d_model  # the block's LayerNorm: weight and bias
        counts[num_heads] = n + 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts


@bug("counts-extra-terms")
def parameter_counts__per_head_scale_no_key_bias(d_model, head_counts, bias=False):
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"{num_heads} heads do not divide d_model = {d_model}")
        n = 4 * d_model * d_model + num_heads  # a learned temperature per head
        counts[num_heads] = n + (3 * d_model if bias else 0)  # the key has no bias
    return counts


@bug("mha-transforms-input")
def multi_head_attention__pre_layernorm(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    mean, var = X.mean(axis=-1, keepdims=True), X.var(axis=-1, keepdims=True)
    x = (X - mean) / np.sqrt(var + 1e-5)  # the block's pre-norm, done here
    q, k, v = (split_heads(x @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-transforms-input")
def multi_head_attention__rms_normed_input(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    x = X / np.sqrt(np.mean(X**2, axis=-1, keepdims=True) + 1e-6)  # llama's RMSNorm, weight 1
    q, k, v = (split_heads(x @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("attention-cosine-scores")
def attention__swin_v2_cosine(Q, K, V):
    def unit(a):
        return a / np.maximum(np.sqrt(np.sum(a * a, axis=-1, keepdims=True)), 1e-12)

    scores = unit(Q) @ np.swapaxes(unit(K), -1, -2) * np.exp(np.log(10.0))  # logit_scale
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@bug("attention-cosine-scores")
def attention__cosine_temperature(Q, K, V):
    q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    k = K / np.linalg.norm(K, axis=-1, keepdims=True)
    weights = softmax(q @ np.swapaxes(k, -1, -2) / 0.07, axis=-1)  # CLIP-style temperature
    return weights @ V, weights


@bug("pairs-relative-tolerance")
def distinct_head_pairs__notebook_rel_error(weights, atol=1e-6):
    def rel_error(x, y):  # the assignment's check, "should be less than 1e-5"
        return np.max(np.abs(x - y)) / np.max(np.maximum(np.abs(x) + np.abs(y), 1e-10))

    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if rel_error(weights[i], weights[j]) > atol
    ]


# --- the tenth authors' set, seen (tests/data/authors/heldout_j/): weights whose rows do not sum
# to 1, key/value heads shared by groups, the projections transformed or narrowed (each class
# beyond its example: tests/test_diagnose_classes.py)


@bug("attention-rows-not-normalised")
def attention__zero_sink_column(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    sink = np.zeros(scores.shape[:-1] + (1,))  # gpt-oss's sink logit, before training
    weights = softmax(np.concatenate([scores, sink], axis=-1), axis=-1)[..., :-1]
    return weights @ V, weights


@bug("attention-rows-not-normalised")
def attention__exp_never_divided(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the division forgotten
    return weights @ V, weights


@bug("mha-rows-not-normalised", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__learned_sinks_inline(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 2, 1) / math.sqrt(d_head)
    sinks = np.linspace(-1.0, 0.5, num_heads)[:, None, None]  # one learned logit per head
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / (e.sum(axis=-1, keepdims=True) + np.exp(sinks - s.max(axis=-1, keepdims=True)))
    return merge_heads(w @ v) @ Wo, w


@bug("mha-rows-not-normalised", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__softmax_plus_one(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    s = q @ k.transpose(0, 2, 1) / math.sqrt(d_head)
    top = np.maximum(s.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(s - top)
    w = e / (np.exp(-top) + e.sum(axis=-1, keepdims=True))  # "quiet" softmax: 1 + sum exp
    return merge_heads(w @ v) @ Wo, w


@bug("mha-grouped-query", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__qwen2_half_kv_heads(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    kv_heads = num_heads // 2 if num_heads % 2 == 0 else num_heads
    q = split_heads(X @ Wq, num_heads, d_head)
    k, v = (split_heads(X @ W[:, : kv_heads * d_head], kv_heads, d_head) for W in (Wk, Wv))
    k, v = (np.repeat(a, num_heads // kv_heads, axis=0) for a in (k, v))  # repeat_kv
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-grouped-query", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__two_kv_heads_tiled(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    kv_heads = 2 if num_heads % 2 == 0 else 1
    q = split_heads(X @ Wq, num_heads, d_head)
    k, v = (split_heads(X @ W[:, -kv_heads * d_head :], kv_heads, d_head) for W in (Wk, Wv))
    k, v = (np.tile(a, (num_heads // kv_heads, 1, 1)) for a in (k, v))  # head i: kv i % 2
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-transforms-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__relu_dense_layers(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    Q, K, V = (np.maximum(X @ W, 0) for W in (Wq, Wk, Wv))  # dense(..., activation=relu)
    out, w = attention(*(split_heads(M, num_heads, d_head) for M in (Q, K, V)))
    return merge_heads(out) @ Wo, w


@bug("mha-transforms-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__l2_qk_norm(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    q, k = (a / np.linalg.norm(a, axis=-1, keepdims=True) for a in (q, k))  # F.normalize
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("mha-narrow-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__sam_downsample_rate(X, Wq, Wk, Wv, Wo, num_heads):
    _check_heads(X, num_heads)
    c = max((X.shape[-1] // 2) // num_heads, 1)  # internal_dim = embedding_dim // 2
    k = c * num_heads
    q, kk, v = (split_heads(X @ W[:, :k], num_heads, c) for W in (Wq, Wk, Wv))
    out, w = attention(q, kk, v)
    return merge_heads(out) @ Wo[:k], w


@bug("mha-narrow-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__quarter_width_qk(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    c = max(d_head // 4, 1)  # a narrower query-key width, values at full width
    q, k = (split_heads(X @ W[:, : c * num_heads], num_heads, c) for W in (Wq, Wk))
    v = split_heads(X @ Wv, num_heads, d_head)
    w = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(c), axis=-1)
    return merge_heads(w @ v) @ Wo, w


# --- the eleventh authors' set, seen (tests/data/authors/heldout_k/): weights smoothed before
# they are returned, grouped projections, attention without a softmax, the projections clipped,
# heads compared by a distance of their own, a layer other than torch's counted (each class
# beyond its example: tests/test_diagnose_classes.py)


@bug("mha-smoothed-weights", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__eps_renormalised_weights(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    w = (w + 0.01) / (w + 0.01).sum(axis=-1, keepdims=True)  # "no zeros for the entropy"
    return merge_heads(out) @ Wo, w


@bug("mha-smoothed-weights", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__sharpened_weights(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    w = w**1.5 / (w**1.5).sum(axis=-1, keepdims=True)  # a temperature of 2/3 for the plots
    return merge_heads(out) @ Wo, w


@bug("mha-grouped-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__per_head_slices(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    heads = []
    for W in (Wq, Wk, Wv):  # each head from its own d_head features of X and its own block
        blocks = [
            X[:, i * d_head : (i + 1) * d_head]
            @ W[i * d_head : (i + 1) * d_head, i * d_head : (i + 1) * d_head]
            for i in range(num_heads)
        ]
        heads.append(np.stack(blocks))
    out, w = attention(*heads)
    return merge_heads(out) @ Wo, w


@bug("mha-grouped-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__two_groups_qk(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    d_model = X.shape[-1]
    mask = np.zeros((d_model, d_model))
    half = d_model // 2
    mask[:half, :half] = mask[half:, half:] = 1.0  # two groups, queries and keys only
    q, k = (split_heads(X @ (W * mask), num_heads, d_head) for W in (Wq, Wk))
    out, w = attention(q, k, split_heads(X @ Wv, num_heads, d_head))
    return merge_heads(out) @ Wo, w


@bug("attention-not-softmax")
def attention__relu_feature_map(Q, K, V):
    phi_q, phi_k = np.maximum(Q, 0.0), np.maximum(K, 0.0)
    kernel = phi_q @ np.swapaxes(phi_k, -1, -2)
    weights = kernel / (kernel.sum(axis=-1, keepdims=True) + 1e-4)
    return weights @ V, weights


@bug("attention-not-softmax")
def attention__squared_scores_normalised(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    weights = scores**2 / (scores**2).sum(axis=-1, keepdims=True)
    return weights @ V, weights


@bug("mha-transforms-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__clip_qk_at_3(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k = (split_heads(np.clip(X @ W, -3.0, 3.0), num_heads, d_head) for W in (Wq, Wk))
    out, w = attention(q, k, split_heads(X @ Wv, num_heads, d_head))
    return merge_heads(out) @ Wo, w


@bug("mha-transforms-projections", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__soft_capped_qkv(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(12.0 * np.tanh(X @ W / 12.0), num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


@bug("pairs-another-distance")
def distinct_head_pairs__mean_squared_difference(weights, atol=1e-6):
    w = np.asarray(weights, dtype=np.float64)
    h = len(w)
    return [(i, j) for i in range(h) for j in range(i + 1, h) if np.mean((w[i] - w[j]) ** 2) > atol]


@bug("pairs-another-distance")
def distinct_head_pairs__mean_kl(weights, atol=1e-6):
    w = np.asarray(weights, dtype=np.float64)
    h = len(w)

    def kl(p, q):
        return np.mean(np.sum(p * np.log(p / q), axis=-1))

    return [(i, j) for i in range(h) for j in range(i + 1, h) if kl(w[i], w[j]) > atol]


@bug("counts-extra-terms")
def parameter_counts__grouped_qkv_two_groups(d_model, head_counts, bias=False):
    counts = {}
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} heads do not divide d_model = {d_model}")
        total = 3 * d_model * (d_model // 2) + d_model * d_model  # grouped q, k, v in two
        counts[h] = total + (4 * d_model if bias else 0)
    return counts


# --- the twelfth authors' set, seen (tests/data/authors/heldout_l/): a softmax with a factor
# inside (each class beyond its example: tests/test_diagnose_classes.py)


@bug("softmax-temperature")
def softmax__base_two(x, axis=-1):
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp2(z)  # the fused kernels' exp2, without their log2(e) on the scores
    return e / np.sum(e, axis=axis, keepdims=True)


@bug("softmax-temperature")
def softmax__temperature_two(x, axis=-1, temperature=2.0):
    z = x / temperature
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _sparsemax_rows(z):
    zs = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    cs = np.cumsum(zs, axis=-1)
    kk = (1 + k * zs > cs).sum(axis=-1, keepdims=True)
    tau = (np.take_along_axis(cs, kk - 1, axis=-1) - 1) / kk
    return np.maximum(z - tau, 0.0)


@bug("attention-sparse-weights")
def attention__sparsemax(Q, K, V):
    weights = _sparsemax_rows(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
    return weights @ V, weights


@bug("attention-sparse-weights")
def attention__hard_attention(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    best = np.argmax(scores, axis=-1)[..., None]  # "hard attention": the best key only
    weights = (np.arange(scores.shape[-1]) == best).astype(float)
    return weights @ V, weights


@bug("mha-activated-scores", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__softplus_scores(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
    w = softmax(np.logaddexp(0.0, s), axis=-1)  # "positive scores" before the softmax
    return merge_heads(w @ v) @ Wo, w


@bug("mha-activated-scores", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__gelu_scores(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
    s = 0.5 * s * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (s + 0.044715 * s**3)))  # GELU
    w = softmax(s, axis=-1)
    return merge_heads(w @ v) @ Wo, w


@bug("mha-activated-head-outputs", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__elu_heads(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    out = np.where(out > 0, out, np.expm1(np.minimum(out, 0.0)))  # GAT's F.elu per head
    return merge_heads(out) @ Wo, w


@bug("mha-activated-head-outputs", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__relu_heads(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(np.maximum(out, 0.0)) @ Wo, w


@bug("pairs-argmax")
def distinct_head_pairs__argmax_agreement(weights, atol=1e-6):
    top = np.argmax(np.asarray(weights), axis=-1)  # each query's most-attended key
    h = len(top)
    return [(i, j) for i in range(h) for j in range(i + 1, h) if (top[i] != top[j]).mean() > 0]


@bug("pairs-argmax")
def distinct_head_pairs__argmax_accuracy(weights, atol=1e-6):
    w = np.asarray(weights, dtype=np.float64)
    pairs = []
    for i in range(len(w)):
        for j in range(i + 1, len(w)):
            accuracy = np.mean(w[i].argmax(axis=1) == w[j].argmax(axis=1))  # pyGAT's accuracy
            if accuracy < 1:
                pairs.append((i, j))
    return pairs


@bug("attention-scores-not-dot-product")
def attention__additive_tanh(Q, K, V):
    scores = np.tanh(Q[..., :, None, :] + K[..., None, :, :]).sum(axis=-1)  # Bahdanau, v = 1
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


@bug("attention-scores-not-dot-product")
def attention__negative_l1_distance(Q, K, V):
    d1 = np.abs(Q[..., :, None, :] - K[..., None, :, :]).sum(axis=-1)
    weights = softmax(-d1 / math.sqrt(Q.shape[-1]), axis=-1)  # a Laplacian kernel on q and k
    return weights @ V, weights


def _sinusoid(n, d):
    pos = np.arange(n)[:, None]
    i = np.arange(d)[None, :]
    angle = pos / 10000 ** (2 * (i // 2) / d)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


@bug("mha-depends-on-positions", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__sinusoid_on_qk(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    qk_in = X + _sinusoid(*X.shape)  # DETR's with_pos_embed, Vaswani's table
    q, k = (split_heads(qk_in @ W, num_heads, d_head) for W in (Wq, Wk))
    out, w = attention(q, k, split_heads(X @ Wv, num_heads, d_head))
    return merge_heads(out) @ Wo, w


@bug("mha-depends-on-positions", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__index_added_to_x(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    X = X + np.arange(len(X))[:, None] / len(X)  # "a learned position", here its start
    q, k, v = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = attention(q, k, v)
    return merge_heads(out) @ Wo, w


# --- set N's classes (issue-20-heldout-n-fixes) ----------------------------------------------


@bug("attention-lower-precision")
def attention__float16_products(Q, K, V):
    q, k, v = (np.asarray(a).astype(np.float16) for a in (Q, K, V))
    scores = (q @ np.swapaxes(k, -1, -2)).astype(np.float64) / math.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return (weights.astype(np.float16) @ v).astype(np.float64), weights


@bug("attention-lower-precision")
def attention__half_matmul_scaled_first(Q, K, V):
    half = np.float16
    q = (Q / np.sqrt(Q.shape[-1])).astype(half)
    scores = np.matmul(q, np.swapaxes(K.astype(half), -1, -2))
    weights = softmax(scores.astype(np.float32), axis=-1)
    out = np.matmul(weights.astype(half), V.astype(half))
    return out.astype(np.float64), weights.astype(np.float64)


@bug("mha-activated-output", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__relu_after_output_projection(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    heads = [split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv)]
    out, weights = attention(*heads)
    return np.maximum(merge_heads(out) @ Wo, 0.0), weights  # Dense(activation="relu")


@bug("mha-activated-output", affects=("multi_head_attention", "cross_check"))
def multi_head_attention__tanh_output(X, Wq, Wk, Wv, Wo, num_heads):
    d_head = _check_heads(X, num_heads)
    out, weights = attention(
        split_heads(X @ Wq, num_heads, d_head),
        split_heads(X @ Wk, num_heads, d_head),
        split_heads(X @ Wv, num_heads, d_head),
    )
    return np.tanh(np.einsum("nd,de->ne", merge_heads(out), Wo)), weights


@bug("pairs-not-list-of-tuples", affects=("distinct_head_pairs",))
def distinct_head_pairs__argwhere_array(weights, atol=1e-6):
    diff = np.abs(weights[:, None] - weights[None, :]).max(axis=(-2, -1))
    return np.argwhere(np.triu(diff > atol, k=1))  # (k, 2) int array


@bug("pairs-not-list-of-tuples", affects=("distinct_head_pairs",))
def distinct_head_pairs__list_of_lists(weights, atol=1e-6):
    h = len(weights)
    return [
        [i, j]
        for i in range(h)
        for j in range(i + 1, h)
        if np.max(np.abs(weights[i] - weights[j])) > atol
    ]


@bug("counts-iterates-twice", affects=("parameter_counts",))
def parameter_counts__validate_then_count(d_model, head_counts, bias=False):
    for h in head_counts:  # every setting checked first, as argument checks do
        if d_model % h:
            raise ValueError(f"num_heads {h} does not divide d_model {d_model}")
    per = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return {h: per for h in head_counts}


@bug("counts-iterates-twice", affects=("parameter_counts",))
def parameter_counts__any_then_dict(d_model, head_counts, bias=False):
    bad = [h for h in head_counts if d_model % h != 0]
    if bad:
        raise ValueError(f"head count {bad[0]} does not divide {d_model}")
    size = 4 * d_model * (d_model + (1 if bias else 0))
    return dict((h, size) for h in head_counts)
