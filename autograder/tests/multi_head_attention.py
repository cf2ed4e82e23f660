"""Hidden tests for multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads). Trusted side only."""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader import compare
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


@cache
def _expected(key: tuple, num_heads: int):
    """The reference (out, weights), once per process: a batch grades many submissions."""
    return ref.multi_head_attention(*_inputs(*key), num_heads)


def _check(multi_head_attention, key: tuple, num_heads: int, **kw) -> None:
    """key: the arguments of _inputs, which makes (and caches) X and the four projections."""
    result = multi_head_attention(*_inputs(*key), num_heads)
    out, weights = compare.check_pair(result, "multi_head_attention(...)", "out", "weights")
    expected_out, expected_weights = _expected(key, num_heads)
    compare.check_close(
        weights,
        expected_weights,
        "multi_head_attention's `weights`",
        "(num_heads, n, n)",
        ("head", "query", "key"),
        **kw,
    )
    compare.check_close(
        out,
        expected_out,
        "multi_head_attention's `out`",
        "(n, d_model)",
        ("token", "feature"),
        **kw,
    )


@test_case(name="two heads, n != d_head; X and the weights unmodified")
def two_heads(multi_head_attention):
    _check(multi_head_attention, (501, 5, 8), 2)
    compare.check_unmodified(multi_head_attention, "multi_head_attention(X, Wq, Wk, Wv, Wo, h)")


@test_case(name="two heads, n == d_head")
def tokens_equal_head_width(multi_head_attention):
    _check(multi_head_attention, (502, 4, 8), 2)


@test_case(name="four heads of width 3 on two tokens")
def four_heads(multi_head_attention):
    _check(multi_head_attention, (503, 2, 12), 4)


@test_case(name="large activations (scores in the thousands) give finite, correct results")
def large_scores(multi_head_attention):
    _check(multi_head_attention, (504, 6, 8, 60.0), 2, nan_hint=compare.OVERFLOW_HINT)


@test_case(name="float32 inputs are handled to float32 precision")
def float32_inputs(multi_head_attention):
    _check(multi_head_attention, (505, 6, 6, 1.0, np.float32), 3)


@test_case(name="ValueError when d_model is not divisible by num_heads, the result when it is")
def indivisible(multi_head_attention):
    # A refusal counts only beside a right answer (raising whatever the input earns nothing),
    # on an input simple enough that a mistake charged by the other cases is not charged again:
    # one head, and Wo the identity.
    key = (508, 3, 4)
    result = multi_head_attention(*_one_head_inputs(*key), 1)
    out, weights = compare.check_pair(result, "multi_head_attention(...)", "out", "weights")
    expected_out, expected_weights = ref.multi_head_attention(*_one_head_inputs(*key), 1)
    what = "multi_head_attention's `{}` with one head"
    compare.check_close(weights, expected_weights, what.format("weights"), "(num_heads, n, n)")
    compare.check_close(out, expected_out, what.format("out"), "(n, d_model)")
    for seed, d_model, num_heads in ((506, 6, 4), (507, 8, 3)):
        inputs = _inputs(seed, n=3, d_model=d_model)
        compare.expect_value_error(
            lambda i=inputs, h=num_heads: multi_head_attention(*i, h),
            "when d_model is not divisible by num_heads",
        )
