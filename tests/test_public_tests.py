"""The public tests (exercises/tests): the reference passes them, classic mistakes fail them.

Each known mistake (docs/contract.md §6) is built here as a small buggy function and must fail the
right public check with a message that names the idea behind the mistake.
"""

from __future__ import annotations

import importlib.util
import math
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from otter.test_files import GradingResults
from otter.test_files.exception_test import ExceptionTestFile

from mha_check.questions import CODE_QUESTIONS
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

ROOT = Path(__file__).resolve().parent.parent
PUBLIC_TESTS = ROOT / "exercises" / "tests"
REFERENCE_ENV = {**vars(ref_cc), **vars(ref)}


def run_public(qid: str, **replace) -> dict[str, str | None]:
    """Run question `qid`'s public cases on the reference with some functions replaced.

    Returns case function name -> None when it passed, else the failure's message.
    """
    test_file = ExceptionTestFile.from_file(str(PUBLIC_TESTS / f"{qid}.py"))
    env = {**REFERENCE_ENV, **replace}
    outcome: dict[str, str | None] = {}
    for tc in test_file.test_cases:
        try:
            tc.body.call_func(env)
        except Exception as e:  # noqa: BLE001 - any failure is what the caller inspects
            outcome[tc.body.test_func.__name__] = f"{type(e).__name__}: {e}"
        else:
            outcome[tc.body.test_func.__name__] = None
    return outcome


def failures(qid: str, **replace) -> dict[str, str]:
    return {k: v for k, v in run_public(qid, **replace).items() if v is not None}


# ---------------------------------------------------------------- the reference passes everything


def test_there_is_one_public_test_file_per_code_question():
    assert sorted(p.stem for p in PUBLIC_TESTS.glob("*.py")) == sorted(CODE_QUESTIONS)


@pytest.mark.parametrize("qid", list(CODE_QUESTIONS))
def test_reference_solution_passes_every_public_check(qid):
    outcome = run_public(qid)
    assert len(outcome) >= 4, f"{qid}: expected several checks, found {len(outcome)}"
    assert failures(qid) == {}


@pytest.mark.parametrize("qid", list(CODE_QUESTIONS))
def test_public_test_file_has_otter_metadata_and_no_reference_code(qid):
    path = PUBLIC_TESTS / f"{qid}.py"
    source = path.read_text()
    test_file = ExceptionTestFile.from_file(str(path))
    assert test_file.name == qid
    assert "OK_FORMAT = False" in source  # otter check refuses files without it
    assert "solutions" not in source and "mha_grader" not in source
    for fn in CODE_QUESTIONS:  # a test must call the student's function, never define its own
        assert f"def {fn}(" not in source, f"{qid}.py defines {fn}"
    for tc in test_file.test_cases:
        params = tc.body._get_func_params()
        assert qid in params, f"{tc.body.test_func.__name__} does not take {qid}"


def test_public_tests_pass_through_otters_own_checker_on_the_reference_scripts():
    """What `otter check` runs inside its kernel: the script's globals, then Checker.check."""
    from otter.execute import Checker
    from otter.nbmeta_config import NBMetadataConfig

    results = []
    for qid, filename in CODE_QUESTIONS.items():
        env = {"__name__": "__main__"}
        source = (ROOT / "solutions" / filename).read_text()
        source = source.replace("from .multihead import", "from solutions.multihead import")
        exec(compile(source, filename, "exec"), env)
        results.append(
            Checker.check(str(PUBLIC_TESTS / f"{qid}.py"), NBMetadataConfig(), None, env)
        )
    graded = pickle.loads(pickle.dumps(GradingResults(results)))  # as otter hands results back
    assert graded.possible > 0 and graded.total == graded.possible


@pytest.mark.skipif(
    importlib.util.find_spec("ipykernel") is None,
    reason="otter check runs the script in a Jupyter kernel: needs ipykernel (not pinned here)",
)
@pytest.mark.parametrize(
    "script, qid", [("multihead.py", "split_heads"), ("crosscheck.py", "cross_check")]
)
def test_otter_check_passes_the_reference_scripts(tmp_path, script, qid):
    for name in ("multihead.py", "crosscheck.py"):
        shutil.copy(ROOT / "solutions" / name, tmp_path / name)
    shutil.copytree(PUBLIC_TESTS, tmp_path / "tests")
    run = subprocess.run(
        [sys.executable, "-m", "otter", "check", script, "-t", "tests", "-q", qid],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "All tests passed!" in run.stdout, run.stdout + run.stderr


# ------------------------------------------------------------------------- softmax mistakes


def softmax_wrong_axis(x, axis=-1):
    return ref.softmax(x, axis=0)


def softmax_global(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def softmax_no_keepdims(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis)


def softmax_unstable(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_in_place(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x.copy()


@pytest.mark.parametrize(
    "buggy, check, words",
    [
        (softmax_wrong_axis, "test_rows_sum_to_one_on_the_last_axis", "wrong axis"),
        (softmax_global, "test_rows_sum_to_one_on_the_last_axis", "whole array"),
        (softmax_no_keepdims, "test_square_input_normalises_each_row", "keepdims"),
        (softmax_unstable, "test_large_scores_stay_finite", "Subtract the maximum"),
        (softmax_in_place, "test_input_is_not_modified", "in place"),
    ],
)
def test_softmax_mistake_fails_with_a_message_naming_it(buggy, check, words):
    failed = failures("softmax", softmax=buggy)
    assert check in failed
    assert words in failed[check]


def softmax_in_float32(x, axis=-1):  # right to float32's precision, as the contract allows
    x32 = np.asarray(x).astype(np.float32)
    e = np.exp(x32 - np.max(x32, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.asarray(x).dtype)


def test_a_softmax_computed_in_float32_passes_every_check_as_grading_passes_it():
    """The contract compares to float32's precision (1e-4): a softmax that computes in float32
    and hands back float64 is right, and the large scores' check must not hold it to 1e-9."""
    assert failures("softmax", softmax=softmax_in_float32) == {}


def test_softmax_without_keepdims_on_a_non_square_input_is_told_about_keepdims():
    failed = failures("softmax", softmax=softmax_no_keepdims)
    message = failed["test_rows_sum_to_one_on_the_last_axis"]
    assert message.startswith("AssertionError") and "keepdims=True" in message


# ------------------------------------------------------------------- split / merge mistakes


def split_interleaved(M, num_heads, d_head):
    return M.reshape(M.shape[0], d_head, num_heads).transpose(2, 0, 1)


def split_without_check(M, num_heads, d_head):
    return M.reshape(M.shape[0], -1, d_head).transpose(1, 0, 2)[:num_heads]


def merge_no_transpose(H):
    h, n, d = H.shape
    return H.reshape(n, h * d)


def merge_reversed(H):
    return ref.merge_heads(H[::-1])


def split_no_transpose(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("width")
    return M.reshape(num_heads, M.shape[0], d_head)


@pytest.mark.parametrize(
    "qid, buggy, check, words",
    [
        ("split_heads", split_no_transpose, "test_worked_values", "rows of several tokens"),
        ("split_heads", split_no_transpose, "test_shape_and_head_blocks", "move the head"),
        ("split_heads", split_interleaved, "test_shape_and_head_blocks", "round-robin"),
        ("split_heads", split_without_check, "test_wrong_width_raises_value_error", "ValueError"),
        ("merge_heads", merge_no_transpose, "test_shape_and_column_blocks", "rows mix tokens"),
        ("merge_heads", merge_reversed, "test_worked_values", "reverse order"),
    ],
)
def test_split_and_merge_mistakes_fail_with_a_message_naming_them(qid, buggy, check, words):
    failed = failures(qid, **{qid: buggy})
    assert check in failed
    assert words in failed[check]


def split_heads_second(M, num_heads, d_head):  # haiku's [T, H, K]: the head axis never moved
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("width")
    return M.reshape(M.shape[0], num_heads, d_head)


def merge_heads_second(H):  # the last two axes flattened, as if H were (n, num_heads, d_head)
    return H.reshape(*H.shape[:-2], -1)


@pytest.mark.parametrize(
    "qid, buggy, mistaken",
    [
        ("split_heads", split_heads_second, "a plain reshape to (num_heads, n, d_head) gives"),
        ("merge_heads", merge_heads_second, "a plain reshape of (num_heads, n, d_head) to"),
    ],
)
def test_a_square_worked_example_does_not_name_one_of_two_mistakes_it_cannot_tell_apart(
    qid, buggy, mistaken
):
    """With n == num_heads (the worked values) the [T, H, K] layout of haiku and Flax gives the
    numbers of a plain reshape: the words say both, and the shape check names the layout
    (tests/data/authors/FINDINGS_D.md)."""
    failed = failures(qid, **{qid: buggy})
    assert "n == num_heads" in failed["test_worked_values"]
    assert mistaken not in failed["test_worked_values"]
    other = "test_shape_and_head_blocks" if qid == "split_heads" else "test_shape_and_column_blocks"
    assert other in failed


# -------------------------------------------------------------------------- attention mistakes


def attention_with(scale, transpose=lambda K: np.swapaxes(K, -1, -2), use_vt=False):
    def attention(Q, K, V):
        w = ref.softmax(Q @ transpose(K) / scale(Q.shape[-1]), axis=-1)
        return (w @ np.swapaxes(V, -1, -2) if use_vt else w @ V), w

    return attention


@pytest.mark.parametrize(
    "buggy, check, words",
    [
        (attention_with(lambda d: 1.0), "test_worked_values", "without dividing"),
        (attention_with(lambda d: d), "test_worked_values", "instead of sqrt"),
        (attention_with(math.sqrt, use_vt=True), "test_worked_values", "transpose K, not V"),
        (
            attention_with(math.sqrt, transpose=lambda K: K.T),
            "test_leading_axes_are_independent",
            "K.T reverses every axis",
        ),
    ],
)
def test_attention_mistake_fails_with_a_message_naming_it(buggy, check, words):
    failed = failures("attention", attention=buggy)
    assert check in failed
    assert words in failed[check]


def test_attention_returning_weights_first_is_told_the_order():
    failed = failures("attention", attention=lambda Q, K, V: ref.attention(Q, K, V)[::-1])
    assert "(weights, out)" in failed["test_shapes_and_rows_sum_to_one"]


# ----------------------------------------------------------------------------- mha mistakes


def mha_with(*, project_out=True, split=True, scale_by_d_model=False, swap_qk=False):
    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        d_model = X.shape[-1]
        if d_model % num_heads:
            raise ValueError("heads")
        if swap_qk:
            Wq, Wk = Wk, Wq
        h = num_heads if split else 1
        d = d_model // h
        Q, K, V = (ref.split_heads(X @ W, h, d) for W in (Wq, Wk, Wv))
        scale = math.sqrt(d_model if scale_by_d_model else d)
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) / scale, axis=-1)
        merged = ref.merge_heads(w @ V)
        return (merged @ Wo if project_out else merged), w

    return multi_head_attention


@pytest.mark.parametrize(
    "buggy, check, words",
    [
        (mha_with(project_out=False), "test_worked_values_one_head", "output projection"),
        (mha_with(project_out=False), "test_worked_values_two_heads", "output projection"),
        (mha_with(scale_by_d_model=True), "test_worked_values_two_heads", "sqrt(d_model)"),
        (mha_with(split=False), "test_shapes_and_rows_sum_to_one", "instead of splitting"),
        (mha_with(swap_qk=True), "test_worked_values_one_head", "Q and K swapped"),
    ],
)
def test_mha_mistake_fails_with_a_message_naming_it(buggy, check, words):
    failed = failures("multi_head_attention", multi_head_attention=buggy)
    assert check in failed
    assert words in failed[check]


def test_mha_built_on_a_split_without_transpose_fails_the_head_locality_check():
    def split_bad(M, num_heads, d_head):
        return M.reshape(num_heads, M.shape[0], d_head)

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d = X.shape[-1] // num_heads
        Q, K, V = (split_bad(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        out, w = ref.attention(Q, K, V)
        return ref.merge_heads(out) @ Wo, w

    failed = failures("multi_head_attention", multi_head_attention=mha)
    assert "only its own block" not in failed.get("test_shapes_and_rows_sum_to_one", "")
    assert (
        "head 0 must see only features 0:4" in failed["test_each_head_sees_only_its_own_features"]
    )


# ------------------------------------------------------------ distinct pairs and parameter counts


@pytest.mark.parametrize(
    "buggy, words",
    [
        (lambda w, atol=1e-6: ref.distinct_head_pairs(w, atol)[::-1], "wrong order"),
        (lambda w, atol=1e-6: [(j, i) for i, j in ref.distinct_head_pairs(w, atol)], "i < j"),
        (lambda w, atol=1e-6: set(ref.distinct_head_pairs(w, atol)), "must return a list"),
    ],
)
def test_distinct_pairs_mistakes_are_named(buggy, words):
    failed = failures("distinct_head_pairs", distinct_head_pairs=buggy)
    assert any(words in message for message in failed.values()), failed


def test_distinct_pairs_ignoring_atol_fails_the_atol_check():
    def exact(weights, atol=1e-6):
        h = len(weights)
        return [
            (i, j) for i in range(h) for j in range(i + 1, h) if (weights[i] != weights[j]).any()
        ]

    failed = failures("distinct_head_pairs", distinct_head_pairs=exact)
    assert set(failed) == {"test_atol_decides_what_counts_as_equal"}


def test_parameter_counts_leaving_the_check_to_torch_is_told_to_raise_value_error():
    def counts(d_model, head_counts, bias=False):
        return {
            h: sum(
                p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=bias).parameters()
            )
            for h in head_counts
        }

    failed = failures("parameter_counts", parameter_counts=counts)
    assert set(failed) == {"test_head_count_that_does_not_divide_raises"}
    assert "raise ValueError" in failed["test_head_count_that_does_not_divide_raises"]


def test_parameter_counts_that_grow_with_heads_are_told_why_they_do_not():
    failed = failures(
        "parameter_counts",
        parameter_counts=lambda d, hs, bias=False: {h: 4 * d * d * h for h in hs},
    )
    assert "splitting into heads is a reshape" in failed["test_module_example"]


# ----------------------------------------------------------------------- adapter mistakes


def adapter_no_transpose(mha):
    return tuple(W.T.copy() for W in ref_cc.weights_from_torch(mha))


def adapter_qkv_order(mha):
    Wq, Wk, Wv, Wo = ref_cc.weights_from_torch(mha)
    return Wk, Wq, Wv, Wo


def adapter_float32(mha):
    return tuple(W.astype(np.float32) for W in ref_cc.weights_from_torch(mha))


@pytest.mark.parametrize(
    "buggy, check, words",
    [
        (adapter_no_transpose, "test_projections_match_torch", "transpose it"),
        (adapter_qkv_order, "test_projections_match_torch", "holds the k block"),
        (adapter_float32, "test_returns_four_float64_matrices", "float64"),
        (
            lambda mha: ref_cc.weights_from_torch(torch.nn.MultiheadAttention(4, 2, bias=False)),
            "test_module_with_biases_or_separate_projections_raises",
            "must raise ValueError",
        ),
    ],
)
def test_adapter_mistake_fails_with_a_message_naming_it(buggy, check, words):
    failed = failures("weights_from_torch", weights_from_torch=buggy)
    assert check in failed
    assert words in failed[check]


def cross_check_with(*, average=False, wrong_layout=False, strict=False):
    def cross_check(mha, X):
        x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
        first = mha.batch_first != wrong_layout
        x = x.unsqueeze(0) if first else x.unsqueeze(1)
        with torch.no_grad():
            out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=average)
        out_t = (out_t[0] if first else out_t[:, 0]).double().numpy()
        out, w = ref.multi_head_attention(np.asarray(X, float), *ref_cc.weights_from_torch(mha), 2)
        od = float(np.abs(out - out_t).max())
        wd = float(np.abs(w - w_t[0].double().numpy()).max())
        tol = 1e-14 if strict else 1e-6
        match = od < tol and wd < tol
        return {"output_max_abs_diff": od, "weights_max_abs_diff": wd, "match": match}

    return cross_check


@pytest.mark.parametrize(
    "buggy, check, words",
    [
        (cross_check_with(average=True), "test_float64_module_matches", "average_attn_weights"),
        (cross_check_with(wrong_layout=True), "test_float64_module_matches", "batch_first"),
        (cross_check_with(strict=True), "test_float32_module_matches", "too strict"),
    ],
)
def test_cross_check_mistake_fails_with_a_message_naming_it(buggy, check, words):
    failed = failures("cross_check", cross_check=buggy)
    assert check in failed
    assert words in failed[check]


def test_cross_check_that_always_says_match_is_caught():
    def always(mha, X):
        return {"output_max_abs_diff": 0.0, "weights_max_abs_diff": 0.0, "match": True}

    failed = failures("cross_check", cross_check=always)
    assert {"test_a_different_output_is_noticed", "test_different_weights_are_noticed"} <= set(
        failed
    )


# ------------------------------------------------- checks added so that public and hidden agree


def attention_scores_kq(Q, K, V):
    w = ref.softmax(K @ np.swapaxes(Q, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w


def mha_unstable(X, Wq, Wk, Wv, Wo, num_heads):
    d = X.shape[-1] // num_heads
    if X.shape[-1] % num_heads:
        raise ValueError("heads")
    Q, K, V = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
    e = np.exp(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d))
    w = e / e.sum(axis=-1, keepdims=True)
    return ref.merge_heads(w @ V) @ Wo, w


@pytest.mark.parametrize(
    "qid, buggy, check, words",
    [
        (
            "softmax",
            lambda x, axis=-1: ref.softmax(x, axis).astype(np.float16),
            "test_float32_scores",
            "float16",
        ),
        ("softmax", lambda x, axis=-1: ref.softmax(x, axis=1), "test_worked_values", "AxisError"),
        (
            "split_heads",
            lambda M, h, d: M.reshape(-1, h, d).transpose(1, 0, 2),
            "test_wrong_width_raises_value_error",
            "must raise ValueError",
        ),
        (
            "merge_heads",
            lambda H: ref.merge_heads(H).astype(np.float16),
            "test_float32_heads",
            "float32 or float64",
        ),
        ("attention", attention_scores_kq, "test_square_worked_values", "K Q^T"),
        (
            "attention",
            lambda Q, K, V: tuple(a.astype(np.float16) for a in ref.attention(Q, K, V)),
            "test_float32_inputs",
            "float32 or float64",
        ),
        (
            "multi_head_attention",
            mha_unstable,
            "test_large_activations_stay_finite",
            "maximum first",
        ),
        (
            "parameter_counts",
            lambda d, hs, bias=True: ref.parameter_counts(d, hs, bias),
            "test_bias_defaults_to_false",
            "defaults to False",
        ),
    ],
)
def test_a_mistake_the_hidden_tests_charge_is_caught_by_a_public_check(qid, buggy, check, words):
    failed = failures(qid, **{qid: buggy})
    assert check in failed, failed
    assert words in failed[check]


def test_weights_from_torch_is_checked_on_a_batch_first_module():
    def first_layout_only(mha):
        if mha.batch_first:
            raise ValueError("batch_first modules are not supported")
        return ref_cc.weights_from_torch(mha)

    failed = failures("weights_from_torch", weights_from_torch=first_layout_only)
    assert set(failed) == {"test_projections_match_torch"}


# ------------------ set G's classes (issue-20-heldout-g-fixes): any other scale, any mask, in place


def _attention_scores(transform):
    def attention(Q, K, V):
        w = ref.softmax(transform(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])), axis=-1)
        return w @ V, w

    return attention


def _band(s):
    n, m = s.shape[-2:]
    return np.where(np.abs(np.arange(n)[:, None] - np.arange(m)[None, :]) > 1, -np.inf, s)


def test_attention_with_another_scale_is_told_the_factor_it_used():
    failed = failures("attention", attention=_attention_scores(lambda s: s / math.sqrt(3)))
    assert "a scale 0.577 times 1/sqrt(d_k) gives" in failed["test_worked_values"]


def test_attention_with_a_mask_is_told_a_mask_was_applied():
    def second_key_masked(s):
        return np.where(np.arange(s.shape[-1]) == 1, -np.inf, s)

    failed = failures("attention", attention=_attention_scores(second_key_masked))
    assert "is a mask applied" in failed["test_worked_values"]


def test_attention_changing_its_query_in_place_is_told_so_where_it_first_shows():
    def attention(Q, K, V):
        Q /= math.sqrt(Q.shape[-1])
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
        return w @ V, w

    failed = failures("attention", attention=attention)
    assert "changed its input Q in place" in failed["test_leading_axes_are_independent"]
    assert "Do not modify the arrays" in failed["test_inputs_are_not_modified"]


def test_mha_with_a_sliding_window_is_told_a_mask_was_applied():
    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError("heads")
        d = X.shape[-1] // num_heads
        Q, K, V = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        w = ref.softmax(_band(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d)), axis=-1)
        return ref.merge_heads(w @ V) @ Wo, w

    failed = failures("multi_head_attention", multi_head_attention=multi_head_attention)
    assert "is a mask applied" in failed["test_worked_values_three_tokens_two_heads"]


# -------- set J's classes (issue-20-heldout-j-fixes): a sink's extra logit, shared or narrower
# heads, rounded weights, a float64 tolerance far too loose


def test_attention_with_an_extra_logit_is_told_what_the_rows_sum_to_and_why():
    def sunk(Q, K, V):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        sink = np.zeros(s.shape[:-1] + (1,))
        w = ref.softmax(np.concatenate([s, sink], axis=-1), axis=-1)[..., :-1]
        return w @ V, w

    failed = failures("attention", attention=sunk)
    assert "one extra logit of 0" in failed["test_worked_values"]
    assert "one extra logit of 0" in failed["test_shapes_and_rows_sum_to_one"]


def _mha_heads(width=None, kv_heads=None):
    """multi_head_attention with heads ``width`` wide (the first columns of the projections) or
    ``kv_heads`` key/value heads repeated to the query heads."""

    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError("heads")
        d = X.shape[-1] // num_heads
        c = width or d
        q = ref.split_heads(X @ Wq[:, : c * num_heads], num_heads, c)
        g = kv_heads or num_heads
        k, v = (ref.split_heads(X @ W[:, : g * c], g, c) for W in (Wk, Wv))
        k, v = (np.repeat(a, num_heads // g, axis=0) for a in (k, v))
        out, w = ref.attention(q, k, v)
        return ref.merge_heads(out) @ Wo[: c * num_heads], w

    return multi_head_attention


@pytest.mark.parametrize(
    "buggy, words",
    [
        (_mha_heads(width=1), "using only the first 2 columns of Wq and Wk"),
        (_mha_heads(kv_heads=1), "1 key head shared among the 2 query heads"),
    ],
)
def test_mha_with_narrower_or_shared_heads_is_told_what_its_weights_are(buggy, words):
    failed = failures("multi_head_attention", multi_head_attention=buggy)
    assert words in failed["test_worked_values_two_heads"]


def test_weights_rounded_through_float32_are_told_so():
    def rounded(mha):
        return tuple(
            W.astype(np.float32).astype(np.float64) for W in ref_cc.weights_from_torch(mha)
        )

    failed = failures("weights_from_torch", weights_from_torch=rounded)
    assert set(failed) == {"test_projections_match_torch"}
    assert "rounded to float32 and back" in failed["test_projections_match_torch"]


def test_cross_check_with_a_loose_float64_tolerance_fails_only_the_moderate_difference():
    def tolerance(float64_tol):
        def cross_check(mha, X):
            report = ref_cc.cross_check(mha, X)
            worst = max(report["output_max_abs_diff"], report["weights_max_abs_diff"])
            tol = 1e-2 if mha.in_proj_weight.dtype == torch.float32 else float64_tol
            return {**report, "match": worst <= tol}

        return cross_check

    failed = failures("cross_check", cross_check=tolerance(1e-2))
    assert set(failed) == {"test_a_moderate_difference_on_a_float64_module_is_no_match"}
    assert "never a match" in failed["test_a_moderate_difference_on_a_float64_module_is_no_match"]
    for reasonable in (1e-8, 1e-5, 1e-3):
        assert failures("cross_check", cross_check=tolerance(reasonable)) == {}


def test_mha_with_activated_projections_fails_its_own_checks_told_they_are_linear():
    """A ReLU on the projections passes every worked example (their projections are never
    negative): the per-head check flips the signs of Wq, Wk and Wv, which a linear layer
    follows, so that mha-check fails multi_head_attention, as grading does, and not the
    cross_check that calls it."""

    def relu_dense(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError("heads")
        d = X.shape[-1] // num_heads
        Q, K, V = (ref.split_heads(np.maximum(X @ W, 0), num_heads, d) for W in (Wq, Wk, Wv))
        out, w = ref.attention(Q, K, V)
        return ref.merge_heads(out) @ Wo, w

    failed = failures("multi_head_attention", multi_head_attention=relu_dense)
    assert "a non-linearity before attention" in failed["test_each_head_sees_only_its_own_features"]


# -------- set K's classes (issue-20-heldout-k-fixes): projections through diagonal blocks


@pytest.mark.parametrize("groups", [2, 4, 8])
def test_mha_with_grouped_projections_is_told_a_block_of_wq_is_used(groups):
    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        d_model = X.shape[-1]
        if d_model % num_heads or d_model % groups:
            raise ValueError("heads")
        size = d_model // groups
        mask = np.kron(np.eye(groups), np.ones((size, size)))
        return ref.multi_head_attention(X, Wq * mask, Wk * mask, Wv * mask, Wo, num_heads)

    failed = failures("multi_head_attention", multi_head_attention=multi_head_attention)
    assert "a grouped projection" in failed["test_each_head_sees_only_its_own_features"]


def test_a_right_mha_passes_the_grouped_projection_check():
    failed = failures("multi_head_attention", multi_head_attention=ref.multi_head_attention)
    assert "test_each_head_sees_only_its_own_features" not in failed
