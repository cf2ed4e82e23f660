"""Hidden tests for multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads). Trusted side only.

Each check carries an error forward (``mha_grader.grading.carry``, with the case's ``case``):
a result that is wrong only because the student's own split_heads, attention or merge_heads
is wrong keeps its points, and says so.
"""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader.grading import carry, checks
from solutions import multihead as ref

name = "multi_head_attention"


@cache
def _inputs(seed: int, n: int, d_model: int, x_scale: float = 1.0, dtype=np.float64):
    """X and four different, non-symmetric projections (none is the identity)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_model)) * x_scale
    Ws = [rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return tuple(a.astype(dtype) for a in (X, *Ws))


@cache
def _one_head_inputs(seed: int, n: int, d_model: int):
    """X and the projections of _inputs, but with Wo the identity."""
    X, Wq, Wk, Wv, _ = _inputs(seed, n, d_model)
    return X, Wq, Wk, Wv, np.eye(d_model)


def _callees(split_heads, attention, merge_heads) -> dict:
    # Not cached: a cache keyed by the proxies would keep every graded session alive in a batch.
    return {"split_heads": split_heads, "attention": attention, "merge_heads": merge_heads}


@cache
def _expected(key: tuple, num_heads: int):
    """The reference (out, weights), once per process: a batch grades many submissions
    (read-only, as they are shared)."""
    pair = ref.multi_head_attention(*_inputs(*key), num_heads)
    for a in pair:
        a.setflags(write=False)
    return pair


def check_composite(case, multi_head_attention, callees: dict, inputs: tuple, expected, what, **kw):
    """The student's result on ``inputs`` against ``expected``, an error carried forward from
    the student's ``callees`` (their proxies by name) where one is wrong."""

    def verify(result, want) -> None:
        out, weights = checks.check_pair(result, "multi_head_attention(...)", "out", "weights")
        checks.check_close(
            weights,
            want[1],
            what.format("weights"),
            "(num_heads, n, n)",
            ("head", "query", "key"),
            **kw,
        )
        checks.check_close(
            out, want[0], what.format("out"), "(n, d_model)", ("token", "feature"), **kw
        )

    reference = {"split_heads": ref.split_heads, "attention": ref.attention}
    reference["merge_heads"] = ref.merge_heads
    carry.check(
        case,
        "multi_head_attention",
        multi_head_attention,
        inputs,
        verify,
        expected,
        {name: (callees[name], reference[name]) for name in reference},
    )


def _check(case, multi_head_attention, callees: dict, key: tuple, num_heads: int, **kw) -> None:
    """key: the arguments of _inputs, which makes (and caches) X and the four projections."""
    inputs = (*_inputs(*key), num_heads)
    expected = _expected(key, num_heads)
    check_composite(
        case, multi_head_attention, callees, inputs, expected, "multi_head_attention's `{}`", **kw
    )


@test_case(name="two heads, n != d_head; X and the weights unmodified")
@checks.kinds("two heads, n != d_head", "the inputs left unmodified")
def two_heads(multi_head_attention, split_heads, attention, merge_heads, case):
    _check(
        case, multi_head_attention, _callees(split_heads, attention, merge_heads), (501, 5, 8), 2
    )
    checks.check_unmodified(multi_head_attention, "multi_head_attention(X, Wq, Wk, Wv, Wo, h)")


@test_case(name="two heads, n == d_head")
@checks.kinds("n == d_head")
def tokens_equal_head_width(multi_head_attention, split_heads, attention, merge_heads, case):
    _check(
        case, multi_head_attention, _callees(split_heads, attention, merge_heads), (502, 4, 8), 2
    )


@test_case(name="four heads of width 3 on two tokens")
@checks.kinds("more heads than tokens")
def four_heads(multi_head_attention, split_heads, attention, merge_heads, case):
    _check(
        case, multi_head_attention, _callees(split_heads, attention, merge_heads), (503, 2, 12), 4
    )


@test_case(name="large activations (scores in the thousands) give finite, correct results")
@checks.kinds("large activations")
def large_scores(multi_head_attention, split_heads, attention, merge_heads, case):
    _check(
        case,
        multi_head_attention,
        _callees(split_heads, attention, merge_heads),
        (504, 6, 8, 60.0),
        2,
        nan_hint=checks.OVERFLOW_HINT,
    )


@test_case(name="float32 inputs are handled to float32 precision")
@checks.kinds("float32 inputs")
def float32_inputs(multi_head_attention, split_heads, attention, merge_heads, case):
    _check(
        case,
        multi_head_attention,
        _callees(split_heads, attention, merge_heads),
        (505, 6, 6, 1.0, np.float32),
        3,
    )


@test_case(name="ValueError when d_model is not divisible by num_heads, the result when it is")
@checks.kinds("one head", "ValueError: num_heads does not divide d_model")
def indivisible(multi_head_attention, split_heads, attention, merge_heads, case):
    # A refusal counts only beside a right answer (raising whatever the input earns nothing),
    # on an input simple enough that a mistake charged by the other cases is not charged again:
    # one head, and Wo the identity.
    key = (508, 3, 4)
    inputs = (*_one_head_inputs(*key), 1)
    check_composite(
        case,
        multi_head_attention,
        _callees(split_heads, attention, merge_heads),
        inputs,
        ref.multi_head_attention(*inputs),
        "multi_head_attention's `{}` with one head",
    )
    for seed, d_model, num_heads in ((506, 6, 4), (507, 8, 3)):
        inputs = _inputs(seed, n=3, d_model=d_model)
        checks.expect_value_error(
            lambda i=inputs, h=num_heads: multi_head_attention(*i, h),
            "when d_model is not divisible by num_heads",
        )
