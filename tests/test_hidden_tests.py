"""The hidden tests: full marks for the reference and correct alternatives, partial credit for
simple mistakes, clear messages that never leak hidden inputs or test source.

Student functions are wrapped with ``direct.proxy``: the same calling semantics as the sandbox
(copies in, plain data out, exceptions as StudentCodeError) without a worker process.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
import torch

from mha_check.questions import CODE_QUESTIONS
from mha_grader.grading import hidden
from mha_grader.grading.direct import bind, proxy
from mha_grader.points import POINTS
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

FUNCTIONS = {name: getattr(ref, name) for name in list(CODE_QUESTIONS)[:7]}
FUNCTIONS.update(weights_from_torch=ref_cc.weights_from_torch, cross_check=ref_cc.cross_check)


def env_with(**overrides) -> dict:
    """Proxies for every contract function: the reference, except the ones overridden."""
    return bind({name: proxy(overrides.get(name, func)) for name, func in {**FUNCTIONS}.items()})


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
    head_counts = list(head_counts)  # any iterable, a generator too: read it once
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


# --- stubs and simple mistakes --------------------------------------------------------------


def stub(*args, **kwargs):
    raise NotImplementedError("YOUR CODE HERE")


@pytest.mark.parametrize("qid", CODE_QUESTIONS)
def test_stub_scores_zero_with_not_attempted(qid):
    results = grade(qid, **{qid: stub})
    assert score(results) == 0
    assert all("not attempted" in r.output for r in results)


def softmax_unstable(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)


def softmax_ignores_axis(x, axis=-1):
    return ref.softmax(x, axis=-1)


def softmax_global(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_axis_one(x, axis=-1):
    """d2l's scratch softmax, made stable: axis 1 whatever `axis` says (the last axis of a 2-D
    array, so attention on one head works)."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def split_no_transpose(M, num_heads, d_head):
    return M.reshape(num_heads, M.shape[0], d_head)


def split_reshape_minus_one(M, num_heads, d_head):
    return M.reshape(M.shape[0], num_heads, -1).transpose(1, 0, 2)  # never checks d_head


def split_unchecked_reshape(M, num_heads, d_head):
    """TensorFlow tutorials' split: right whenever the width fits, and a ValueError only where
    M's entries cannot fill (-1, num_heads, d_head)."""
    return M.reshape(-1, num_heads, d_head).transpose(1, 0, 2)


def split_squeezed(M, num_heads, d_head):
    return ref.split_heads(M, num_heads, d_head).squeeze()  # one head loses its head axis


def merge_no_transpose(H):
    return H.reshape(H.shape[1], -1)


def merge_reversed(H):
    return ref.merge_heads(H[::-1])


def attention_no_scale(Q, K, V):
    w = ref.softmax(Q @ np.swapaxes(K, -1, -2))
    return w @ V, w


def attention_unstable(Q, K, V):
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w


def attention_float16(Q, K, V):
    out, w = ref.attention(Q, K, V)
    return out.astype(np.float16), w.astype(np.float16)


def mha_no_output_projection(X, Wq, Wk, Wv, Wo, num_heads):
    return ref.multi_head_attention(X, Wq, Wk, Wv, np.eye(X.shape[1]), num_heads)


def mha_assert_instead_of_raise(X, Wq, Wk, Wv, Wo, num_heads):
    assert X.shape[1] % num_heads == 0, "num_heads must divide d_model"
    return ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)


def mha_unstable(X, Wq, Wk, Wv, Wo, num_heads):
    d = X.shape[1] // num_heads
    if X.shape[1] % num_heads:
        raise ValueError("d_model % num_heads != 0")
    Qh, Kh, Vh = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
    out, w = attention_unstable(Qh, Kh, Vh)
    return ref.merge_heads(out) @ Wo, w


def pairs_all(weights, atol=1e-6):
    return list(itertools.combinations(range(weights.shape[0]), 2))


def pairs_mean_difference(weights, atol=1e-6):
    h = weights.shape[0]
    return [
        (i, j)
        for i, j in itertools.combinations(range(h), 2)
        if np.abs(weights[i] - weights[j]).mean() > atol
    ]


def pairs_allclose_default_rtol(weights, atol=1e-6):  # np.allclose's hidden rtol=1e-5
    h = weights.shape[0]
    return [
        (i, j)
        for i, j in itertools.combinations(range(h), 2)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


def pairs_reversed_order(weights, atol=1e-6):
    return ref.distinct_head_pairs(weights, atol)[::-1]


def pairs_as_lists(weights, atol=1e-6):
    return [list(p) for p in ref.distinct_head_pairs(weights, atol)]


def counts_ignore_bias(d_model, head_counts, bias=False):
    return ref.parameter_counts(d_model, head_counts, bias=False)


def counts_bias_default_true(d_model, head_counts, bias=True):
    return ref.parameter_counts(d_model, head_counts, bias=bias)


def counts_without_check(d_model, head_counts, bias=False):
    return {h: 4 * d_model * d_model + 4 * d_model * bias for h in head_counts}


def counts_read_twice(d_model, head_counts, bias=False):
    """Checks the head counts, then counts them: a generator is empty the second time."""
    for h in head_counts:
        if d_model % h:
            raise ValueError(f"{h} does not divide {d_model}")
    return {h: 4 * d_model * d_model + 4 * d_model * bias for h in head_counts}


def counts_per_head(d_model, head_counts, bias=False):
    counts = ref.parameter_counts(d_model, head_counts, bias)
    return {h: c // h for h, c in counts.items()}


def adapter_no_transpose(mha):
    Ws = ref_cc.weights_from_torch(mha)
    return tuple(W.T.copy() for W in Ws)


def adapter_no_bias_check(mha):
    d = mha.embed_dim
    if mha.in_proj_weight is None:
        raise ValueError("separate projections")
    w = mha.in_proj_weight.detach().double().numpy()
    return (
        *(w[i * d : (i + 1) * d].T.copy() for i in range(3)),
        mha.out_proj.weight.detach().double().numpy().T.copy(),
    )


def adapter_no_kdim_check(mha):
    if mha.in_proj_bias is not None or mha.bias_k is not None:
        raise ValueError("biases")
    d, w = mha.embed_dim, mha.in_proj_weight.detach().double().numpy()  # None with kdim/vdim
    Wo = mha.out_proj.weight.detach().double().numpy().T
    return (*(w[i * d : (i + 1) * d].T for i in range(3)), Wo)


def adapter_converts_the_module(mha):
    return ref_cc.weights_from_torch(mha.double())  # .double() converts the caller's module


def adapter_float32(mha):
    return tuple(W.astype(np.float32) for W in ref_cc.weights_from_torch(mha))


def adapter_rounded_to_float32(mha):
    return tuple(W.astype(np.float32).astype(np.float64) for W in ref_cc.weights_from_torch(mha))


def cross_check_always_match(mha, X):
    return {"output_max_abs_diff": 0.0, "weights_max_abs_diff": 0.0, "match": True}


def cross_check_never_match(mha, X):
    return {**ref_cc.cross_check(mha, X), "match": False}


def cross_check_ignores_batch_first(mha, X):
    """Always feeds (1, n, d_model): right only for batch_first=True modules."""
    x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype).unsqueeze(0)
    with torch.no_grad():
        out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out, w = ref.multi_head_attention(X, *ref_cc.weights_from_torch(mha), mha.num_heads)
    d_out = float(np.abs(out - out_t[0].double().numpy()).max())
    d_w = float(np.abs(w - w_t[0].double().numpy()).max())
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out + d_w < 1e-4}


def cross_check_zeroes_the_module(mha, X):
    report = ref_cc.cross_check(mha, X)
    with torch.no_grad():
        mha.out_proj.weight.zero_()  # the right report, but the caller's module is changed
    return report


def cross_check_numpy_scalars(mha, X):
    r = ref_cc.cross_check(mha, X)
    return {k: np.float64(v) if k != "match" else np.bool_(v) for k, v in r.items()}


MUTANTS = {
    "softmax": [
        softmax_unstable,
        softmax_no_keepdims,
        softmax_ignores_axis,
        softmax_global,
        softmax_axis_one,
    ],
    "split_heads": [
        split_no_transpose,
        split_reshape_minus_one,
        split_unchecked_reshape,
        split_squeezed,
    ],
    "merge_heads": [merge_no_transpose, merge_reversed],
    "attention": [attention_no_scale, attention_unstable, attention_float16],
    "multi_head_attention": [mha_no_output_projection, mha_assert_instead_of_raise, mha_unstable],
    "distinct_head_pairs": [
        pairs_all,
        pairs_mean_difference,
        pairs_allclose_default_rtol,
        pairs_reversed_order,
        pairs_as_lists,
    ],
    "parameter_counts": [
        counts_ignore_bias,
        counts_bias_default_true,
        counts_without_check,
        counts_read_twice,
        counts_per_head,
    ],
    "weights_from_torch": [
        adapter_no_transpose,
        adapter_no_bias_check,
        adapter_no_kdim_check,
        adapter_converts_the_module,
        adapter_float32,
        adapter_rounded_to_float32,
    ],
    "cross_check": [
        cross_check_always_match,
        cross_check_never_match,
        cross_check_ignores_batch_first,
        cross_check_zeroes_the_module,
    ],
}


@pytest.fixture(scope="module")
def mutant_results() -> dict[tuple[str, str], list]:
    return {(qid, m.__name__): grade(qid, **{qid: m}) for qid, ms in MUTANTS.items() for m in ms}


@pytest.mark.parametrize("qid", CODE_QUESTIONS)
def test_every_hidden_case_fails_for_some_mutant(qid, mutant_results):
    caught = set()
    for (q, _), results in mutant_results.items():
        if q == qid:
            caught |= failed(results)
    assert set(hidden.case_names(qid)) - caught == set()


@pytest.mark.parametrize(
    "qid, mutant, failing",
    [
        ("softmax", "softmax_unstable", ["large"]),
        (
            "softmax",
            "softmax_no_keepdims",
            ["2-D", "square", "3-D array is normalised along the last", "middle", "large", "32"],
        ),
        ("softmax", "softmax_ignores_axis", ["axis=0", "middle"]),
        (
            "softmax",
            "softmax_axis_one",
            ["1-D", "axis=0", "3-D array is normalised along the last"],
        ),
        ("split_heads", "split_no_transpose", ["n != d_head", "n == d_head", "four heads"]),
        ("split_heads", "split_reshape_minus_one", ["ValueError when", "ValueError also"]),
        ("split_heads", "split_unchecked_reshape", ["ValueError also"]),
        ("split_heads", "split_squeezed", ["one head", "ValueError when", "ValueError also"]),
        ("merge_heads", "merge_reversed", ["n != d_head", "n == d_head", "four", "float32"]),
        ("attention", "attention_unstable", ["large"]),
        ("multi_head_attention", "mha_assert_instead_of_raise", ["ValueError"]),
        ("multi_head_attention", "mha_unstable", ["large"]),
        (
            "distinct_head_pairs",
            "pairs_mean_difference",
            ["atol decides", "default atol", "atol alone"],
        ),
        (
            "distinct_head_pairs",
            "pairs_reversed_order",
            ["every", "identical", "atol", "default", "atol alone"],
        ),
        ("distinct_head_pairs", "pairs_allclose_default_rtol", ["atol alone"]),
        ("parameter_counts", "counts_ignore_bias", ["bias=True"]),
        ("parameter_counts", "counts_bias_default_true", ["defaults"]),
        ("parameter_counts", "counts_without_check", ["ValueError"]),
        ("parameter_counts", "counts_read_twice", ["generator"]),
        ("weights_from_torch", "adapter_no_transpose", ["float64", "float32", "reproduce"]),
        ("weights_from_torch", "adapter_no_bias_check", ["biases"]),
        ("weights_from_torch", "adapter_no_kdim_check", ["kdim"]),
        ("weights_from_torch", "adapter_converts_the_module", ["module unmodified"]),
        ("weights_from_torch", "adapter_rounded_to_float32", ["float64 module", "reproduce"]),
        ("cross_check", "cross_check_always_match", ["float64", "float64", "float32", "float32"]),
        ("cross_check", "cross_check_never_match", ["float64", "float64", "float32", "float32"]),
        ("cross_check", "cross_check_ignores_batch_first", ["batch_first=False"] * 2),
        ("cross_check", "cross_check_zeroes_the_module", ["unmodified"]),
    ],
)
def test_mistake_loses_exactly_the_cases_it_fails(qid, mutant, failing, mutant_results):
    """Each listed fragment names the failing cases; every other case keeps its points."""
    results = mutant_results[(qid, mutant)]
    lost = sorted(r.name for r in results if not r.passed)
    assert len(lost) == len(failing), lost
    for fragment in failing:
        assert any(fragment in name for name in lost), (fragment, lost)
    share = POINTS[qid] / len(results)
    assert score(results) == pytest.approx(share * (len(results) - len(failing)))


# --- what comes back, and what the student is told -------------------------------------------


def test_list_instead_of_array_fails_with_a_clear_message():
    results = grade("softmax", softmax=lambda x, axis=-1: ref.softmax(x, axis).tolist())
    assert score(results) == 0
    assert all("NumPy array" in r.output and "a list" in r.output for r in results)


def test_torch_tensor_instead_of_array_fails_with_a_clear_message():
    results = grade("merge_heads", merge_heads=lambda H: torch.from_numpy(ref.merge_heads(H)))
    assert score(results) == 0
    assert all("not plain data" in r.output and "torch tensor" in r.output for r in results)


class ClaimsEquality:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


@pytest.mark.parametrize("qid", CODE_QUESTIONS)
def test_object_claiming_equality_with_everything_gets_nothing(qid):
    results = grade(qid, **{qid: lambda *a, **k: ClaimsEquality()})
    assert score(results) == 0
    assert all(r.output for r in results)


def test_tuple_of_the_wrong_length_is_named():
    results = grade("attention", attention=lambda Q, K, V: ref.attention(Q, K, V)[0])
    assert score(results) == 0
    assert all("tuple (out, weights)" in r.output for r in results)


def test_wrong_shape_message_describes_the_expected_shape_in_words():
    results = grade("split_heads", split_heads=lambda M, h, d: ref.split_heads(M, h, d)[:, :, :1])
    assert any("(num_heads, n, d_head)" in r.output for r in results)


def test_value_error_of_the_wrong_type_is_named():
    results = grade("multi_head_attention", multi_head_attention=mha_assert_instead_of_raise)
    (bad,) = [r for r in results if not r.passed]
    assert "should raise ValueError" in bad.output and "AssertionError instead" in bad.output


def test_value_error_message_must_name_the_offending_head_count():
    def vague(d_model, head_counts, bias=False):
        head_counts = list(head_counts)
        if any(d_model % h for h in head_counts):
            raise ValueError("bad head count")
        return ref.parameter_counts(d_model, head_counts, bias)

    (bad,) = [r for r in grade("parameter_counts", parameter_counts=vague) if not r.passed]
    assert "does not name the offending value" in bad.output


def test_numpy_scalars_and_bools_count_as_floats_and_bools():
    assert failed(grade("cross_check", cross_check=cross_check_numpy_scalars)) == set()


def test_cross_check_is_not_punished_for_an_honestly_reported_wrong_pipeline():
    """A student whose multi_head_attention forgets Wo reports large differences: honest."""

    def cross_check_with_broken_pipeline(mha, X):
        dtype = mha.in_proj_weight.dtype
        x = torch.as_tensor(X, dtype=dtype)
        x = x[None] if mha.batch_first else x[:, None]
        with torch.no_grad():
            out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
        out_t = (out_t[0] if mha.batch_first else out_t[:, 0]).double().numpy()
        out, w = mha_no_output_projection(X, *ref_cc.weights_from_torch(mha), mha.num_heads)
        d_out, d_w = float(np.abs(out - out_t).max()), float(np.abs(w - w_t[0].numpy()).max())
        return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out < 1e-4}

    results = grade(
        "cross_check",
        cross_check=cross_check_with_broken_pipeline,
        multi_head_attention=mha_no_output_projection,
    )
    assert failed(results) == set(), [r.output for r in results if not r.passed]
    # Without the student's own pipeline to compare with, the same report is not believed.
    results = grade("cross_check", cross_check=cross_check_with_broken_pipeline)
    assert len(failed(results)) == 4


@pytest.mark.parametrize(
    "name, charged",
    [
        ("cross_check__kernel_test_tolerance", True),  # 1e-2 for both dtypes
        ("cross_check__allclose_bf16_defaults", True),  # torch's bfloat16 rtol, 1.6e-2
        ("cross_check__tolerance_1e3_for_float64", False),  # 1e-3, and 1e-2 for float32
        ("cross_check__allclose_1e3_relative", False),  # allclose, rtol = atol = 1e-3
    ],
)
def test_a_float64_tolerance_above_1e3_loses_one_case_and_one_up_to_1e3_none(name, charged):
    """On a float64 module a difference above 1e-3 of the output's size is no match (contract
    §1, cross_check): the grader's pipeline, off by twice that, called a match costs the case
    that asks; float32 keeps its 1e-2."""
    from tests.mutants.build import BY_NAME, load_env

    results = hidden.run_question("cross_check", load_env(BY_NAME[name]))
    lost = [r for r in results if not r.passed]
    assert len(lost) == charged, [r.output for r in lost]
    if charged:
        assert "no match for a pipeline off by more than 1e-3" in lost[0].name
        assert "1e-3 of the output's size is never a match" in lost[0].output
        assert score(results) == pytest.approx(POINTS["cross_check"] * 3 / 4)


def test_the_moderate_difference_lies_between_float64s_bound_and_float32s():
    """The module it is asked on: its output moved by 2e-3 of its size is above 1e-3 of that
    size and below 1e-2 in absolute terms, so a fixed 1e-2 tolerance calls it a match."""
    from autograder.tests import cross_check as case
    from mha_grader.diagnose import moderate
    from mha_grader.grading import honesty

    probe = case._probe(802, 3, 12, 4, torch.float64, True)
    moved = moderate.moved(probe.pair[0], probe.scale)
    diff = float(np.abs(moved - probe.pair[0]).max())
    assert moderate.MODERATE * probe.scale < diff < honesty.LARGE


def test_unexpected_error_in_a_test_becomes_a_failed_case_with_a_neutral_message(monkeypatch):
    from otter.test_files import ExceptionTestFile

    source = (
        "from otter.test_files import test_case\n"
        "name = 'softmax'\n"
        "@test_case(name='buggy test')\n"
        "def t(softmax):\n"
        "    secret = [7.123456]\n"
        "    return {}['missing ' + str(secret)]\n"
        "@test_case(name='fine test')\n"
        "def u(softmax):\n"
        "    pass\n"
    )
    monkeypatch.setitem(hidden._loaded, "softmax", ExceptionTestFile.from_string(source))
    bad, good = grade("softmax")
    assert (bad.score, bad.output) == (0, hidden.NEUTRAL_FAILURE)
    assert good.score == POINTS["softmax"] / 2 and good.name == "softmax: fine test"


def test_missing_results_list_every_case_with_zero_and_the_reason():
    results = hidden.missing_results("cross_check", "crosscheck.py is missing")
    assert [r.name for r in results] == hidden.case_names("cross_check")
    assert all(r.score == 0 and r.output == "crosscheck.py is missing" for r in results)
    assert sum(r.max_score for r in results) == pytest.approx(POINTS["cross_check"])


def test_all_cases_cover_every_code_question_with_its_points():
    cases = hidden.all_cases()
    assert list(cases) == list(CODE_QUESTIONS)
    for qid, named in cases.items():
        assert all(name.startswith(f"{qid}: ") for name, _ in named)
        assert sum(points for _, points in named) == pytest.approx(POINTS[qid])
        assert len(named) >= 4  # several independent cases: partial credit means something


# --- nothing hidden leaks -------------------------------------------------------------------


def recording(func, seen: list):
    """Wrap func so every array (and module weight) it is called with is kept in `seen`."""

    def call(*args, **kwargs):
        for a in (*args, *kwargs.values()):
            if isinstance(a, np.ndarray):
                seen.append(a.copy())
            elif isinstance(a, torch.nn.Module):
                seen.extend(p.detach().double().numpy().copy() for p in a.parameters())
        return func(*args, **kwargs)

    call.__name__ = func.__name__
    return call


@pytest.fixture(scope="module")
def messages_and_inputs():
    """Every failure message of every mutant, and every hidden input the tests sent."""
    seen: list[np.ndarray] = []
    messages = []
    for qid, mutants in MUTANTS.items():
        for m in [*mutants, stub]:
            env = {
                name: proxy(recording(m if name == qid else f, seen))
                for name, f in FUNCTIONS.items()
            }
            messages += [r.output for r in hidden.run_question(qid, env) if not r.passed]
    return messages, seen


def test_failure_messages_never_show_hidden_input_values(messages_and_inputs):
    messages, inputs = messages_and_inputs
    assert len(messages) > 100 and len(inputs) > 50
    values = {f"{v:.4f}" for a in inputs for v in np.ravel(a) if abs(v) >= 1e-3}
    text = "\n".join(messages)
    assert [v for v in values if v in text] == []
    assert not re.search(r"\[\s*-?\d", text), "an array printout appears in a message"


def test_failure_messages_never_show_test_source(messages_and_inputs):
    messages, _ = messages_and_inputs
    text = "\n".join(messages)
    for qid in CODE_QUESTIONS:
        source = (hidden.paths.HIDDEN_TESTS / f"{qid}.py").read_text()
        code_lines = [
            line.strip()
            for line in source.splitlines()
            if len(line.strip()) > 20 and not line.strip().startswith(('"', 'f"', "#"))
        ]
        assert [line for line in code_lines if line in text] == []
    for marker in ("Traceback", "Error at line", 'File "', "autograder/", "solutions"):
        assert marker not in text


def test_a_function_missing_from_env_costs_its_question_with_a_message():
    env = env_with()
    del env["distinct_head_pairs"]
    results = hidden.run_question("distinct_head_pairs", env)
    assert score(results) == 0 and len(results) == len(hidden.case_names("distinct_head_pairs"))
    assert all("not defined in multihead.py" in r.output for r in results)


def test_test_files_load_once_and_safely_from_several_threads(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(hidden, "_loaded", {})
    env, qids = env_with(), list(CODE_QUESTIONS) * 2
    with ThreadPoolExecutor(4) as pool:
        totals = list(pool.map(lambda q: score(hidden.run_question(q, env)), qids))
    assert totals == pytest.approx([POINTS[q] for q in qids])
    assert sorted(hidden._loaded) == sorted(CODE_QUESTIONS)


def test_a_students_own_error_message_is_never_shown_only_its_kind():
    def noisy(M, num_heads, d_head):
        raise ValueError(f"cannot split {M} into {num_heads} heads of width {d_head}")

    results = grade("split_heads", split_heads=noisy)
    assert score(results) == 0  # a refusal of everything is no refusal of bad input
    for r in results:
        assert "raised Python's ValueError" in r.output
        assert "cannot split" not in r.output and not re.search(r"\d\.\d", r.output)


# --- inputs left unmodified ---------------------------------------------------------------


def softmax_in_place(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)  # right values, but the caller's scores change
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x


def split_heads_clearing_input(M, num_heads, d_head):
    result = ref.split_heads(M.copy(), num_heads, d_head)
    M[0] = 0.0  # right result, but the caller's matrix loses its first token
    return result


@pytest.mark.parametrize(
    "qid, func",
    [("softmax", softmax_in_place), ("split_heads", split_heads_clearing_input)],
)
def test_changing_an_input_in_place_costs_exactly_the_unmodified_case(qid, func):
    results = grade(qid, **{qid: func})
    lost = [r for r in results if not r.passed]
    assert len(lost) == 1 and "unmodified" in lost[0].name
    assert "changed an input array in place" in lost[0].output
    assert score(results) == pytest.approx(POINTS[qid] * (len(results) - 1) / len(results))


def test_the_reference_leaves_every_input_unmodified():
    env = env_with()
    for qid in list(CODE_QUESTIONS)[:6]:
        hidden.run_question(qid, env)
    assert not any(getattr(p, "inputs_modified", False) for p in env.values())


def test_a_module_changed_by_weights_from_torch_is_charged_there_not_again_in_cross_check():
    def cross_check_through_a_converting_adapter(mha, X):
        report = ref_cc.cross_check(mha, X)
        adapter_converts_the_module(mha)  # the student's own weights_from_torch, called inside
        return report

    results = grade(
        "cross_check",
        cross_check=cross_check_through_a_converting_adapter,
        weights_from_torch=adapter_converts_the_module,
    )
    assert failed(results) == set(), [r.output for r in results if not r.passed]
    alone = grade("cross_check", cross_check=cross_check_through_a_converting_adapter)
    assert [r.name for r in alone if not r.passed] == [hidden.case_names("cross_check")[-1]]
