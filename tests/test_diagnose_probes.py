"""The diagnosis probes separate every pair of catalogued mistakes.

Two mistakes are told apart by their values on a question's probes, by whether they raise
ValueError on its refusal probes (the contract's "must raise" inputs), or by the dtype of what
they return (float32 weights)."""

import itertools
from functools import partial

import numpy as np
import pytest
import torch

from mha_grader.diagnose import mutants as mut
from mha_grader.diagnose import probes as pr
from mha_grader.diagnose.compare import matches, run
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

REF_CALLEES = {"split": ref.split_heads, "attention": mut.attention_ref, "merge": ref.merge_heads}


def _family(catalogue, bind=lambda f: f):
    return [(mid, bind(f)) for mid, fs in catalogue.items() for f in fs]


def _wrong_on(probes, reference, family):
    """Drop variants that are right in this context (a last-axis-only softmax in attention)."""
    expected = run(reference, probes)
    return [(mid, f) for mid, f in family if not matches(run(f, probes), expected)]


def _mha_family():
    whole = _family(mut.MHA, lambda f: partial(f, **REF_CALLEES))
    inside_as_mha = set(mut.INLINE_AS_MHA)
    inline = [
        (mid, partial(mut.mha_ref, **{**REF_CALLEES, "split": f})) for mid, f in _family(mut.SPLIT)
    ]
    inline += [
        (mid, partial(mut.mha_ref, **{**REF_CALLEES, "merge": f})) for mid, f in _family(mut.MERGE)
    ]
    inline += [
        (mid, partial(mut.mha_ref, **{**REF_CALLEES, "attention": f}))
        for mid, f in _family(mut.ATTENTION)
        if mid not in inside_as_mha  # one of multi_head_attention's own mistakes there
    ]
    inline += [
        (
            mid,
            partial(
                mut.mha_ref, **{**REF_CALLEES, "attention": partial(mut.attention_ref, softmax=f)}
            ),
        )
        for mid, f in _family(mut.SOFTMAX)
    ]
    inline = _wrong_on(pr.mha_probes(), partial(mut.mha_ref, **REF_CALLEES), inline)
    # mistakes that raise on every multi-head probe are told apart by their own question
    return [(mid, f) for mid, f in whole + inline if any(o.ok for o in run(f, pr.mha_probes()))]


FAMILIES = {
    "softmax": (pr.softmax_probes, (), ref.softmax, _family(mut.SOFTMAX)),
    "split_heads": (
        pr.split_probes,
        pr.split_refusal_probes,
        ref.split_heads,
        _family(mut.SPLIT),
    ),
    "merge_heads": (pr.merge_probes, (), ref.merge_heads, _family(mut.MERGE)),
    "attention": (
        pr.attention_probes,
        (),
        mut.attention_ref,
        _family(mut.ATTENTION)
        + _wrong_on(
            pr.attention_probes(),
            mut.attention_ref,
            [(mid, partial(mut.attention_ref, softmax=f)) for mid, f in _family(mut.SOFTMAX)],
        ),
    ),
    "multi_head_attention": (
        pr.mha_probes,
        pr.mha_refusal_probes,
        partial(mut.mha_ref, **REF_CALLEES),
        _mha_family(),
    ),
    "weights_from_torch": (
        pr.adapter_probes,
        pr.adapter_refusal_probes,
        ref_cc.weights_from_torch,
        _family(mut.ADAPTER),
    ),
    "parameter_counts": (
        pr.count_probes,
        pr.count_refusal_probes,
        ref.parameter_counts,
        _family(mut.COUNTS),
    ),
}


def _kind(o) -> str:
    """What a call on a refusal probe did, as the diagnosis tells it apart."""
    return "value" if o.ok else "ValueError" if isinstance(o.error, ValueError) else "other"


def _dtypes(outcomes) -> list:
    """The dtype of every array returned (float32 weights differ from float64 ones)."""
    return [
        getattr(a, "dtype", None)
        for o in outcomes
        if o.ok
        for a in (o.value if isinstance(o.value, tuple | list) else [o.value])
    ]


def _result(f, probes, refusals):
    values = run(f, probes())
    return values, [_kind(o) for o in run(f, refusals() if refusals else ())], _dtypes(values)


def _same(a, b) -> bool:
    return matches(a[0], b[0]) and matches(b[0], a[0]) and a[1:] == b[1:]


@pytest.mark.parametrize("qid", FAMILIES)
def test_every_pair_of_different_mistakes_gives_different_results_on_the_probes(qid):
    probes, refusals, reference, family = FAMILIES[qid]
    results = [(mid, _result(f, probes, refusals)) for mid, f in family]
    expected = _result(reference, probes, refusals)
    for mid, r in results:
        assert not _same(r, expected), f"{mid} looks right on the {qid} probes"
    for (a, ra), (b, rb) in itertools.combinations(results, 2):
        if a != b and {a, b} not in TOLD_BY_CALLS:
            assert not _same(ra, rb), f"{a} and {b} coincide"


# Pairs with the same values by construction, told apart by the calls the student's function
# made (the worker's record): queries scaled before a call of attention, or attention typed
# inline dividing by d_head.
TOLD_BY_CALLS = [{"mha-prescaled-query", "scale-not-sqrt"}]


def test_a_pair_with_the_same_values_is_named_by_the_calls_that_happened():
    from mha_grader.diagnose.questions.multi_head_attention import by_calls

    ids = ("mha-prescaled-query",)
    assert by_calls(ids, None, ("split_heads", "attention", "merge_heads")) == (ids, None)
    assert by_calls(ids, None, ("split_heads",)) == (("scale-not-sqrt",), "attention")
    assert by_calls(("scale-not-sqrt",), "attention", ()) == (("scale-not-sqrt",), "attention")


def test_every_question_with_a_refusal_in_the_contract_has_refusal_probes_the_reference_passes():
    for qid, (_, refusals, reference, _) in FAMILIES.items():
        if refusals:
            kinds = [_kind(o) for o in run(reference, refusals())]
            assert kinds and set(kinds) == {"ValueError"}, qid


def test_two_attention_mistakes_at_once_differ_from_every_single_one_and_from_each_other():
    probes = pr.attention_probes()
    singles = [(mid, run(f, probes)) for mid, f in _family(mut.ATTENTION)]
    pairs = [(ids, run(f, probes)) for ids, f in _family(mut.ATTENTION_COMBINED)]
    expected = run(mut.attention_ref, probes)
    for ids, r in pairs:
        assert not matches(r, expected), ids
        for mid, single in singles:
            assert not (matches(r, single) and matches(single, r)), (ids, mid)
    for (a, ra), (b, rb) in itertools.combinations(pairs, 2):
        if a != b:
            assert not (matches(ra, rb) and matches(rb, ra)), (a, b)


def test_cross_check_mistakes_give_different_reports_on_the_probes():
    def report(**kw):
        return [
            mut.cross_check_with(*p.args, ref_cc.weights_from_torch, ref.multi_head_attention, **kw)
            for p in pr.crosscheck_probes()
        ]

    right = report()
    variants = [
        (mid, report(**kw))
        for mid, kws in mut.CROSS_CHECK.items()
        for kw in kws
        if not kw.get("grad") and not kw.get("dtype")  # raise: told by what they raise
    ]
    for mid, r in variants:
        assert r != right
        if mid == "adapter-float32-output":
            # float32 rounding where the module is float64, told apart from float64 rounding
            for p, x, y in zip(pr.crosscheck_probes(), r, right, strict=True):
                if p.args[0].in_proj_weight.dtype == torch.float64:
                    assert max(x.values()) > 1e-9 and max(y.values()) < 1e-12
                else:
                    assert x == y  # a float32 module's results are float32 already
            continue
        assert max(max(x.values()) for x in r) > 1e-2, f"{mid} reports no difference"
    averaged = dict(variants)["adapter-averaged-weights"]
    for mid, r in variants:
        if mid == "adapter-batch-first":
            # output wrong only for one layout; averaged weights leave the output right
            assert any(x["output_max_abs_diff"] > 1e-2 for x in r)
            assert all(x["output_max_abs_diff"] < 1e-4 for x in averaged)


def test_a_cross_check_that_does_not_detach_raises_torchs_runtime_error_on_every_probe():
    (kw,) = mut.CROSS_CHECK["adapter-no-detach"]
    for p in pr.crosscheck_probes():
        with pytest.raises(RuntimeError, match="requires grad"):
            mut.cross_check_with(*p.args, ref_cc.weights_from_torch, ref.multi_head_attention, **kw)


def test_multi_head_probes_meet_the_design_conditions():
    for p in pr.mha_probes():
        X, Wq, Wk, Wv, Wo, h = p.args
        n, d_model = X.shape
        d_head = d_model // h
        assert n >= 2 and h >= 2 and d_head >= 2 and n != d_head and h != d_head
        for W in (Wq, Wk, Wv, Wo):
            assert not np.allclose(W, W.T)
    assert any(p.large for p in pr.mha_probes())
    assert any(p.large for p in pr.attention_probes())
    assert any(p.large for p in pr.softmax_probes())


def test_the_large_probes_overflow_an_unshifted_exponential():
    (big,) = [p for p in pr.softmax_probes() if p.large]
    with np.errstate(all="ignore"):
        assert not np.isfinite(np.exp(big.args[0])).all() or (np.exp(big.args[0]) == 0).any()


def test_a_fixed_dtype_cross_check_raises_on_the_modules_of_the_other_dtype_only():
    for kw in mut.CROSS_CHECK["adapter-fixed-dtype"]:
        for p in pr.crosscheck_probes():
            mha = p.args[0]
            fits = str(mha.in_proj_weight.dtype) == f"torch.{kw['dtype']}"
            try:
                mut.cross_check_with(
                    *p.args, ref_cc.weights_from_torch, ref.multi_head_attention, **kw
                )
                raised = False
            except RuntimeError:
                raised = True
            assert raised != fits, (kw, mha.in_proj_weight.dtype)
