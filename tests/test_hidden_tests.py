"""The hidden tests: full marks for the reference and correct alternatives, partial credit for
simple mistakes, clear messages that never leak hidden inputs or test source.

Student functions are wrapped with ``direct.proxy``: the same calling semantics as the sandbox
(copies in, plain data out, exceptions as StudentCodeError) without a worker process.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from mha_grader import hidden
from mha_grader.direct import proxy
from mha_grader.questions import CODE_QUESTIONS, POINTS
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

FUNCTIONS = {name: getattr(ref, name) for name in list(CODE_QUESTIONS)[:7]}
FUNCTIONS.update(weights_from_torch=ref_cc.weights_from_torch, cross_check=ref_cc.cross_check)


def env_with(**overrides) -> dict:
    """Proxies for every contract function: the reference, except the ones overridden."""
    return {name: proxy(overrides.get(name, func)) for name, func in {**FUNCTIONS}.items()}


def grade(qid: str, **overrides) -> list:
    return hidden.run_question(qid, env_with(**overrides))


def score(results) -> float:
    return sum(r.score for r in results)


def failed(results) -> set[str]:
    return {r.name for r in results if not r.passed}


# --- correct alternatives -------------------------------------------------------------------


def softmax_logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - lse)


def softmax_float32(x, axis=-1):
    x = np.asarray(x, dtype=np.float32)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def split_heads_loop(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("M's width must be num_heads * d_head")
    return np.stack([M[:, h * d_head : (h + 1) * d_head] for h in range(num_heads)])


def split_heads_np_reshape(M, num_heads, d_head):
    if M.shape[1] != num_heads * d_head:
        raise ValueError(f"width {M.shape[1]} != {num_heads} * {d_head}")
    return np.transpose(np.reshape(M, (M.shape[0], num_heads, d_head)), (1, 0, 2))


def merge_heads_concatenate(H):
    return np.concatenate(list(H), axis=-1)


def merge_heads_swapaxes(H):
    return np.swapaxes(H, 0, 1).reshape(H.shape[1], -1)


def attention_einsum(Q, K, V):
    scores = np.einsum("...nd,...md->...nm", Q, K) / np.sqrt(Q.shape[-1])
    weights = softmax_logsumexp(scores)
    return np.einsum("...nm,...mv->...nv", weights, V), weights


def attention_loop(Q, K, V):
    """One query/key/value block at a time, over every leading index."""
    lead = Q.shape[:-2]
    out = np.empty((*lead, Q.shape[-2], V.shape[-1]))
    weights = np.empty((*lead, Q.shape[-2], K.shape[-2]))
    for idx in np.ndindex(*lead):
        s = Q[idx] @ K[idx].T / math.sqrt(Q.shape[-1])
        w = np.exp(s - s.max(axis=1, keepdims=True))
        weights[idx] = w / w.sum(axis=1, keepdims=True)
        out[idx] = weights[idx] @ V[idx]
    return out, weights


def attention_float32(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    weights = softmax_float32(Q @ np.swapaxes(K, -1, -2) / Q.shape[-1] ** 0.5)
    return weights @ V, weights


def mha_head_loop(X, Wq, Wk, Wv, Wo, num_heads):
    """The module's per-head loop: slice each head's columns, attend, concatenate."""
    d_model = X.shape[1]
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d = d_model // num_heads
    outs, weights = [], []
    for h in range(num_heads):
        cols = slice(h * d, (h + 1) * d)
        o, w = attention_loop((X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols])
        outs.append(o)
        weights.append(w)
    return np.concatenate(outs, axis=1) @ Wo, np.stack(weights)


def mha_einsum_float32(X, Wq, Wk, Wv, Wo, num_heads):
    """float32 arithmetic throughout, einsum for the projections and per-head products."""
    n, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("num_heads must divide d_model")
    d = d_model // num_heads
    X, Wq, Wk, Wv, Wo = (np.asarray(a, dtype=np.float32) for a in (X, Wq, Wk, Wv, Wo))
    Q, K, V = (np.einsum("nd,de->ne", X, W).reshape(n, num_heads, d) for W in (Wq, Wk, Wv))
    scores = np.einsum("nhd,mhd->hnm", Q, K) / np.float32(math.sqrt(d))
    weights = softmax_float32(scores)
    heads = np.einsum("hnm,mhd->nhd", weights, V).reshape(n, d_model)
    return heads @ Wo, weights


def distinct_pairs_allclose(weights, atol=1e-6):
    h = weights.shape[0]
    return [
        (i, j)
        for i, j in itertools.combinations(range(h), 2)
        if not np.allclose(weights[i], weights[j], rtol=0, atol=atol)
    ]


def parameter_counts_formula(d_model, head_counts, bias=False):
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"num_heads={h} does not divide d_model={d_model}")
    # q, k, v and output projections, each d_model x d_model (+ d_model biases): h plays no role.
    return {h: 4 * d_model * d_model + (4 * d_model if bias else 0) for h in head_counts}


def weights_from_torch_chunks(mha):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("biases are not supported")
    with torch.no_grad():
        q, k, v = torch.chunk(mha.in_proj_weight.double(), 3, dim=0)
        return tuple(
            np.ascontiguousarray(t.numpy().T) for t in (q, k, v, mha.out_proj.weight.double())
        )


def cross_check_float32_input(mha, X):
    """Rounds X to the module's dtype for both sides, and uses its own match tolerance."""
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X).to(dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_t = out_t.squeeze(0 if mha.batch_first else 1).double().numpy()
    out, w = ref.multi_head_attention(
        x.squeeze(0 if mha.batch_first else 1).double().numpy(),
        *weights_from_torch_chunks(mha),
        mha.num_heads,
    )
    d_out = np.abs(out - out_t).max()
    d_w = np.abs(w - w_t[0].double().numpy()).max()
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out < tol * 10}


ALTERNATIVES = [
    ("softmax", softmax_logsumexp),
    ("softmax", softmax_float32),
    ("split_heads", split_heads_loop),
    ("split_heads", split_heads_np_reshape),
    ("merge_heads", merge_heads_concatenate),
    ("merge_heads", merge_heads_swapaxes),
    ("attention", attention_einsum),
    ("attention", attention_loop),
    ("attention", attention_float32),
    ("multi_head_attention", mha_head_loop),
    ("multi_head_attention", mha_einsum_float32),
    ("distinct_head_pairs", distinct_pairs_allclose),
    ("parameter_counts", parameter_counts_formula),
    ("weights_from_torch", weights_from_torch_chunks),
    ("cross_check", cross_check_float32_input),
]


@pytest.mark.parametrize("qid", CODE_QUESTIONS)
def test_reference_solution_gets_full_marks(qid):
    results = grade(qid)
    assert [r.output for r in results] == [hidden.PASSED] * len(results)
    assert score(results) == pytest.approx(POINTS[qid])


@pytest.mark.parametrize("qid, func", ALTERNATIVES, ids=[f.__name__ for _, f in ALTERNATIVES])
def test_correct_alternative_gets_full_marks(qid, func):
    results = grade(qid, **{qid: func})
    assert failed(results) == set(), [r.output for r in results if not r.passed]
    assert score(results) == pytest.approx(POINTS[qid])
