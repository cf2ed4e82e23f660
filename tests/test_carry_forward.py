"""Error carried forward (mha_grader/grading/carry.py): the rule on its own, through the
hidden tests with in-process proxies (the mutation suite through the real engine is in
test_diagnose_engine.py).

A composite case right given its callees' actual results keeps its points and names the callee;
so does one right given right callees where a callee it called raises (as it does on its own);
a callee not written yet, or that returns another form, a constant or nothing finite makes the
case "could not be checked" (no points); a composite that does nothing earns nothing whatever its
callees return; with the policy off every case is checked against the reference alone.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from mha_grader.grading import hidden, honesty
from mha_grader.outcomes import Tag
from mha_grader.points import POINTS, load_policy
from solutions import crosscheck as ref_cc
from solutions import multihead as ref
from tests.mutants.build import reference_env
from tests.mutants.crosscheck_bugs import own_pipeline_cross_check


def grade(qid: str, on: bool = True, **overrides) -> list:
    return hidden.run_question(qid, reference_env(**overrides), carry_forward=on)


def score(results) -> float:
    return round(sum(r.score for r in results), 6)


def wrong_axis_softmax(x, axis=-1):
    return ref.softmax(x, axis=0)


def test_attention_right_given_a_wrong_softmax_keeps_its_points_and_names_softmax():
    results = grade("attention", softmax=wrong_axis_softmax)
    assert score(results) == POINTS["attention"]
    for r in results:
        assert r.tags == [Tag.CARRIED + "softmax"]
        assert r.output.startswith("passed. Carried forward: your softmax returns wrong values")
    assert score(grade("attention", on=False, softmax=wrong_axis_softmax)) == 0


def test_a_softmax_relying_on_its_default_axis_is_carried_forward_too():
    def softmax_default_last(x, axis=0):  # a wrong default; attention calls softmax(scores)
        return ref.softmax(x, axis=axis)

    def attention(Q, K, V):
        w = softmax_default_last(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
        return w @ V, w

    results = grade("attention", softmax=softmax_default_last, attention=attention)
    assert score(results) == POINTS["attention"]


def test_a_composite_right_given_a_right_callee_keeps_its_points_past_a_callee_that_raises():
    def raising_softmax(x, axis=-1):
        raise ValueError("no")

    results = grade("attention", softmax=raising_softmax)
    assert score(results) == POINTS["attention"]
    for r in results:
        assert r.tags == [Tag.CARRIED + "softmax"]
        assert r.output.startswith(
            "passed. Carried forward: your softmax raises on the inputs your attention gives it, "
            "and your attention is right given a right softmax"
        )
    assert score(grade("attention", on=False, softmax=raising_softmax)) == 0


def test_a_callee_that_raises_only_for_some_inputs_is_carried_where_it_raises():
    def softmax_2d_only(x, axis=-1):
        if x.ndim != 2:
            raise ValueError("2-D only")
        return ref.softmax(x, axis=axis)

    results = grade("attention", softmax=softmax_2d_only)
    assert score(results) == POINTS["attention"]
    assert any(r.tags == [Tag.CARRIED + "softmax"] for r in results)


def test_a_composite_wrong_given_a_right_callee_earns_nothing_beside_a_callee_that_raises():
    def raising_softmax(x, axis=-1):
        raise ValueError("no")

    def unscaled_attention(Q, K, V):
        w = raising_softmax(Q @ np.swapaxes(K, -1, -2))
        return w @ V, w

    results = grade("attention", softmax=raising_softmax, attention=unscaled_attention)
    assert score(results) == 0
    for r in results:
        assert r.output.startswith("could not be checked: your softmax raises on the inputs")
        assert "fix softmax first" in r.output


def test_a_callee_that_raises_only_inside_the_composite_is_the_composites_doing():
    calls = []

    def softmax_that_breaks_after_a_call(x, axis=-1):  # fine alone, raises once called before
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("state")
        return ref.softmax(x, axis=axis)

    def attention(Q, K, V):
        softmax_that_breaks_after_a_call(np.zeros((1, 1)))  # a first call leaves state behind
        w = softmax_that_breaks_after_a_call(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
        return w @ V, w

    def fresh_softmax(x, axis=-1):
        return ref.softmax(x, axis=axis)

    env = reference_env(softmax=softmax_that_breaks_after_a_call, attention=attention)
    env["softmax"].fresh = lambda args, kwargs: (calls.clear(), fresh_softmax(*args, **kwargs))[1]
    results = hidden.run_question("attention", env, carry_forward=True)
    assert score(results) == 0


def test_a_callee_not_written_yet_earns_the_composite_nothing():
    def stub(*a, **k):
        raise NotImplementedError

    results = grade("multi_head_attention", split_heads=stub)
    assert score(results) == 0
    assert all("not attempted" in r.output for r in results)


def test_a_wrong_merge_inside_multi_head_attention_is_carried_and_a_wrong_split_too():
    def reversed_merge(H):
        return ref.merge_heads(H[::-1])

    def reversed_split(M, num_heads, d_head):
        return ref.split_heads(M, num_heads, d_head)[::-1]

    for over in ({"merge_heads": reversed_merge}, {"split_heads": reversed_split}):
        results = grade("multi_head_attention", **over)
        assert score(results) == POINTS["multi_head_attention"], over
        (name,) = over
        carried = [r for r in results if r.output != "passed"]  # one head: no order to reverse
        assert len(carried) == 5 and all(r.tags == [Tag.CARRIED + name] for r in carried)


def test_two_wrong_callees_one_written_inline_are_carried_for_the_one_called():
    def reversed_merge(H):
        return ref.merge_heads(H[::-1])

    def wrong_split(M, num_heads, d_head):
        return ref.split_heads(M, num_heads, d_head)[::-1]

    def mha_with_inline_split(X, Wq, Wk, Wv, Wo, num_heads):  # its own (right) split
        d = X.shape[1] // num_heads
        heads = [(X @ W).reshape(X.shape[0], num_heads, d).transpose(1, 0, 2) for W in (Wq, Wk, Wv)]
        out, weights = ref.attention(*heads)
        return reversed_merge(out) @ Wo, weights

    results = grade(
        "multi_head_attention",
        split_heads=wrong_split,
        merge_heads=reversed_merge,
        multi_head_attention=mha_with_inline_split,
    )
    assert score(results) == POINTS["multi_head_attention"]
    carried = [r for r in results if r.output != "passed"]
    assert len(carried) == 5 and all(r.tags == [Tag.CARRIED + "merge_heads"] for r in carried)


@pytest.mark.parametrize(
    "callee",
    [
        lambda x, axis=-1: np.zeros_like(x),
        lambda x, axis=-1: np.ones_like(x),
        lambda x, axis=-1: np.full_like(x, 0.25),
        lambda x, axis=-1: np.full_like(x, np.nan),
        lambda x, axis=-1: x[..., :1],
    ],
    ids=["zeros", "ones", "a constant", "nan", "another shape"],
)
@pytest.mark.parametrize(
    "composite",
    [
        "zeros",
        "composed",  # the reference composition with the (degenerate) softmax
    ],
)
def test_a_degenerate_callee_carries_nothing_forward(callee, composite):
    def attention(Q, K, V):
        if composite == "zeros":
            n, m = Q.shape[:-1], K.shape[-2]
            return np.zeros((*n, V.shape[-1])), np.zeros((*n, m))
        w = callee(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, w

    results = grade("attention", softmax=callee, attention=attention)
    assert score(results) == 0
    if composite == "composed":
        assert all(r.output.startswith("could not be checked: your softmax") for r in results)


def test_a_composite_that_does_nothing_earns_nothing_beside_a_wrong_callee():
    def constant(*a, **k):
        return np.zeros((3, 3)), np.zeros((3, 3))

    for qid, callee in (("attention", "softmax"), ("multi_head_attention", "attention")):
        wrong = {"softmax": wrong_axis_softmax, "attention": lambda Q, K, V: (V, V)}[callee]
        assert score(grade(qid, **{qid: constant, callee: wrong})) == 0


def test_cross_check_honest_about_a_wrong_adapter_keeps_its_points_only_when_carried():
    def untransposed(mha):
        return tuple(W.T.copy() for W in ref_cc.weights_from_torch(mha))

    results = grade("cross_check", weights_from_torch=untransposed)
    assert score(results) == POINTS["cross_check"]
    assert all(Tag.CARRIED + "weights_from_torch" in r.tags for r in results)
    assert score(grade("cross_check", on=False, weights_from_torch=untransposed)) == 0


def test_cross_check_right_given_right_callees_keeps_its_points_past_a_callee_that_raises():
    """Contract §7, as for any composite: the callee's mistake is charged to it alone."""

    def raising_pipeline(*a, **k):
        raise RuntimeError("pipeline broken")

    def raising_adapter(mha):  # a bias check the wrong way round: raises for every module
        if mha.in_proj_bias is None:
            raise ValueError("modules with biases are not supported")
        return ref_cc.weights_from_torch(mha)

    for callee, raising in (
        ("multi_head_attention", raising_pipeline),
        ("weights_from_torch", raising_adapter),
    ):
        results = grade("cross_check", **{callee: raising})
        assert score(results) == POINTS["cross_check"], [r.output for r in results]
        for r in results:
            assert Tag.CARRIED + callee in r.tags
            assert f"Carried forward: your {callee} raises" in r.output
        assert score(grade("cross_check", on=False, **{callee: raising})) == 0


def _cross_check_over(raising_mha, report_edit=None):
    """The reference cross_check, calling ``raising_mha`` by the name multi_head_attention (as
    a student's calls the student's own), its report changed by ``report_edit``."""
    scope = {**vars(ref_cc), "multi_head_attention": raising_mha}
    scope["_reference"] = types.FunctionType(ref_cc.cross_check.__code__, scope)
    scope["_edit"] = report_edit or (lambda report: report)
    exec("def cross_check(mha, X):\n    return _edit(_reference(mha, X))\n", scope)
    return scope["cross_check"]


def _raising_pipeline(*a, **k):
    raise RuntimeError("pipeline broken")


def test_cross_check_wrong_given_right_callees_earns_nothing_beside_a_callee_that_raises():
    def inflated(report):  # its own mistake: a weights difference that is not the measured one
        return {**report, "weights_max_abs_diff": report["weights_max_abs_diff"] + 0.5}

    own_bug = _cross_check_over(_raising_pipeline, inflated)
    results = grade("cross_check", multi_head_attention=_raising_pipeline, cross_check=own_bug)
    assert score(results) == 0
    assert all("your multi_head_attention raises" in r.output for r in results)
    right = _cross_check_over(_raising_pipeline)
    results = grade("cross_check", multi_head_attention=_raising_pipeline, cross_check=right)
    assert score(results) == POINTS["cross_check"], [r.output for r in results]


def test_cross_check_whose_callee_raises_only_after_cross_check_ran_is_charged():
    """A callee that raises only inside cross_check (right alone, in a fresh worker) is
    cross_check's doing: nothing carried."""
    calls = []

    def breaks_after_a_call(X, *weights):  # fine alone, raises once called before
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("state")
        return ref.multi_head_attention(X, *weights)

    env = reference_env(
        multi_head_attention=breaks_after_a_call,
        cross_check=_cross_check_over(breaks_after_a_call),
    )
    fresh = lambda args, kwargs: (calls.clear(), ref.multi_head_attention(*args, **kwargs))[1]  # noqa: E731
    env["multi_head_attention"].fresh = fresh
    results = hidden.run_question("cross_check", env, carry_forward=True)
    assert score(results) == 0


def test_cross_check_honest_about_a_pipeline_whose_weights_have_another_shape_is_carried():
    """OpenNMT's top_attn: the student's multi_head_attention returns one head's weights, (n, n).
    A cross_check that measures it honestly (torch's per-head weights broadcast against them)
    keeps its points, carried; before, the pipeline was 'not of the contract's shapes' and no
    case could be checked (tests/data/authors/FINDINGS_D.md)."""

    def first_head(X, Wq, Wk, Wv, Wo, num_heads):
        out, weights = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)
        return out, weights[0]

    def constant(mha, X):  # measures nothing: still charged
        return {"output_max_abs_diff": 0.0, "weights_max_abs_diff": 0.0, "match": True}

    results = grade("cross_check", multi_head_attention=first_head)
    assert score(results) == POINTS["cross_check"], [r.output for r in results]
    assert all(Tag.CARRIED + "multi_head_attention" in r.tags for r in results)
    assert score(grade("cross_check", multi_head_attention=first_head, cross_check=constant)) == 0


def _float32_compare(multi_head_attention, cast: bool = True):
    """llama's ``output.float()``: torch's results rounded to float32 before the differences."""

    def cross_check(mha, X):
        import torch

        x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
        x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
        with torch.no_grad():
            t_out, t_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
        t_out = t_out[0] if mha.batch_first else t_out[:, 0]
        t_out, t_w = (t.float() if cast else t.double() for t in (t_out, t_w[0]))
        t_out, t_w = t_out.numpy(), t_w.numpy()
        Ws = ref_cc.weights_from_torch(mha)
        out, w = multi_head_attention(np.asarray(X, np.float64), *Ws, mha.num_heads)
        d_out, d_w = float(np.abs(out - t_out).max()), float(np.abs(w - t_w).max())
        tol = 1e-5 if mha.in_proj_weight.dtype == torch.float32 else 1e-10
        return {
            "output_max_abs_diff": d_out,
            "weights_max_abs_diff": d_w,
            "match": d_out < tol and d_w < tol,
        }

    return cross_check


def test_a_cross_check_comparing_a_float64_module_in_float32_never_keeps_full_marks():
    """On a float64 module the differences must be the pipeline's (contract §1): a report of
    float32 rounding is charged, whether the student's pipeline is right or a wrong one hides it
    behind large differences (tests/data/authors/FINDINGS_D.md, llama_repeat_kv_causal)."""

    def causal(X, Wq, Wk, Wv, Wo, num_heads):
        n, d_head = X.shape[0], X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head) + np.triu(np.full((n, n), -np.inf), 1)
        w = ref.softmax(s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    for mha_impl in (ref.multi_head_attention, causal):
        coarse = _float32_compare(mha_impl)
        results = grade("cross_check", multi_head_attention=mha_impl, cross_check=coarse)
        assert score(results) < POINTS["cross_check"], [r.output for r in results]
        # said in fixed words: no value cross_check reported in the hidden cases is shown
        assert any(honesty.COARSE in r.output for r in results)
    # compared in float64, the student's own (wrong) pipeline honestly reported: carried (a
    # right pipeline of its own beside the wrong one is another pipeline's report: set M)
    fine = _float32_compare(causal, cast=False)
    results = grade("cross_check", multi_head_attention=causal, cross_check=fine)
    assert score(results) == POINTS["cross_check"], [r.output for r in results]


def test_an_inline_correct_pipeline_in_cross_check_keeps_its_points_whatever_the_import():
    def raising(*a, **k):
        raise RuntimeError("pipeline broken")

    results = grade(
        "cross_check",
        cross_check=own_pipeline_cross_check(np.float32),
        multi_head_attention=raising,
    )
    assert score(results) == POINTS["cross_check"], [r.output for r in results]


def test_the_policy_is_read_from_points_toml_and_checked(tmp_path):
    assert load_policy().carry_forward is True
    bad = tmp_path / "points.toml"
    for table, words in (
        ("[policy]\ncarry_forward = 'yes'\n", "true or false"),
        ("[policy]\nnumpy_only = 'flag'\n", "no longer read"),
        ("[policy]\ncarry = true\n", "unknown [policy] keys"),
    ):
        bad.write_text(table)
        with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
            load_policy(bad)


def _rescaled(factor):
    """A multi_head_attention whose scores are scaled by ``factor`` times the right scale."""

    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads} does not divide d_model")
        d_head = X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        s = factor * (q @ np.swapaxes(k, -1, -2)) / np.sqrt(d_head)
        w = ref.softmax(s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    return multi_head_attention


@pytest.mark.parametrize("factor", [0.5, 3.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_report_of_another_pipeline_than_the_students_own_is_charged(factor, dtype):
    """Set M (FINDINGS_M.md): a cross_check reporting a right pipeline of its own where the
    student's multi_head_attention really differs from the module is charged, in either
    dtype, with words that say so; beside a right multi_head_attention the same cross_check
    keeps its points when it compares in float64."""
    results = grade(
        "cross_check",
        multi_head_attention=_rescaled(factor),
        cross_check=own_pipeline_cross_check(dtype),
    )
    assert score(results) == 0, [r.output for r in results]
    assert all("another pipeline than yours" in r.output for r in results)
    # its calls were watched: multi_head_attention was never among them, and that is said
    assert all("never called" in r.output for r in results)
    right = grade("cross_check", cross_check=own_pipeline_cross_check(np.float64))
    assert score(right) == POINTS["cross_check"], [r.output for r in right]


def test_a_pipeline_of_its_own_in_float32_on_a_float64_module_is_adapter_float32_output():
    """Set M: a cross_check that never calls multi_head_attention and computes its pipeline in
    float32 reports float32 rounding on a float64 module that the student's own pipeline
    reproduces to float64 rounding: charged as a comparison in float32 (honesty.COARSE)."""
    results = grade("cross_check", cross_check=own_pipeline_cross_check(np.float32))
    assert score(results) < POINTS["cross_check"], [r.output for r in results]
    assert any(honesty.COARSE in r.output for r in results)


def _absolute_tolerance(tol, multi_head_attention):
    """A cross_check that calls the student's pipeline honestly with one absolute tolerance for
    both dtypes (keras-multi-head's K.epsilon(), 1e-7; a tolerance far below float32 rounding)."""

    def cross_check(mha, X):
        import torch

        out, w = multi_head_attention(
            np.asarray(X, np.float64), *ref_cc.weights_from_torch(mha), mha.num_heads
        )
        x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
        x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
        with torch.no_grad():
            t_out, t_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
        t_out = (t_out[0] if mha.batch_first else t_out[:, 0]).double().numpy()
        d_out = float(np.abs(out - t_out).max())
        d_w = float(np.abs(w - t_w[0].double().numpy()).max())
        return {
            "output_max_abs_diff": d_out,
            "weights_max_abs_diff": d_w,
            "match": bool(d_out < tol and d_w < tol),
        }

    return cross_check


@pytest.mark.parametrize("tol", [1e-7, 1e-9])
def test_a_tolerance_too_strict_for_float32_is_charged_beside_a_wrong_pipeline(tol):
    """Set N (FINDINGS_N.md): a cross_check whose match uses an absolute tolerance below
    float32 rounding for both dtypes, honest about the student's wrong multi_head_attention,
    was carried forward on every case; with a right multi_head_attention in its place it calls
    a float32 module's rounding no match, and the float32 cases are charged, in words that say
    so. With a tolerance fit for float32 the same honest report keeps its points."""
    wrong = _rescaled(0.5)
    strict = _absolute_tolerance(tol, wrong)
    results = grade("cross_check", multi_head_attention=wrong, cross_check=strict)
    lost = [r for r in results if r.score < r.max_score]
    assert lost and all("float32" in r.name for r in lost), [r.output for r in results]
    assert all("With a right multi_head_attention in place of yours" in r.output for r in lost)
    fit = _absolute_tolerance(1e-4, wrong)
    results = grade("cross_check", multi_head_attention=wrong, cross_check=fit)
    assert score(results) == POINTS["cross_check"], [r.output for r in results]


def _masked_call(mask_of, multi_head_attention=ref.multi_head_attention):
    """A cross_check that calls the module with a key_padding_mask ``mask_of(X)`` of its own and
    reports the student's pipeline against it."""

    def cross_check(mha, X):
        import torch

        out, w = multi_head_attention(
            np.asarray(X, np.float64), *ref_cc.weights_from_torch(mha), mha.num_heads
        )
        x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
        x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
        mask = torch.as_tensor(mask_of(np.asarray(X)))[None]
        with torch.no_grad():
            t_out, t_w = mha(
                x, x, x, key_padding_mask=mask, need_weights=True, average_attn_weights=False
            )
        t_out = (t_out[0] if mha.batch_first else t_out[:, 0]).double().numpy()
        d_out = float(np.abs(out - t_out).max())
        d_w = float(np.abs(w - t_w[0].double().numpy()).max())
        tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
        return {
            "output_max_abs_diff": d_out,
            "weights_max_abs_diff": d_w,
            "match": bool(d_out < tol and d_w < tol),
        }

    return cross_check


@pytest.mark.parametrize(
    "mask_of",
    [
        lambda X: np.linalg.norm(X, axis=-1) == 0,  # padding read as tokens of length 0
        lambda X: np.abs(X).sum(axis=-1) < 1e-12,
    ],
)
def test_a_module_called_with_a_mask_read_from_zero_tokens_is_charged(mask_of):
    """Set N: a cross_check that masks the tokens whose features are all 0 (AllenNLP's text
    field mask) reports a computation other than the module's where X has such a token: a
    hidden module's X has one, and the case is charged."""
    results = grade("cross_check", cross_check=_masked_call(mask_of))
    assert score(results) < POINTS["cross_check"], [r.output for r in results]
