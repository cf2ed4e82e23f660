"""Hidden tests for split_heads(M, num_heads, d_head). Trusted side only."""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader.grading import checks
from solutions import multihead as ref

name = "split_heads"
AXES = ("head", "token", "feature")


@cache
def _features(seed: int, n: int, width: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, width))


@cache
def _expected(seed: int, n: int, num_heads: int, d_head: int) -> np.ndarray:
    return ref.split_heads(_features(seed, n, num_heads * d_head), num_heads, d_head)


def _check(split_heads, seed: int, n: int, num_heads: int, d_head: int) -> None:
    M = _features(seed, n, num_heads * d_head)
    checks.check_close(
        split_heads(M, num_heads, d_head),
        _expected(seed, n, num_heads, d_head),
        "split_heads(M, num_heads, d_head)",
        "(num_heads, n, d_head)",
        AXES,
    )


@test_case(name="n != d_head: head h holds the h-th block of consecutive features, M unmodified")
@checks.kinds("n != d_head", "the input left unmodified")
def tokens_differ_from_head_width(split_heads):
    _check(split_heads, 201, n=5, num_heads=3, d_head=2)
    checks.check_unmodified(split_heads, "split_heads(M, num_heads, d_head)")


@test_case(name="n == d_head: heads are cut along features, not tokens")
@checks.kinds("n == d_head")
def tokens_equal_head_width(split_heads):
    _check(split_heads, 202, n=4, num_heads=2, d_head=4)


@test_case(name="four heads on two tokens")
@checks.kinds("more heads than tokens")
def many_heads(split_heads):
    _check(split_heads, 203, n=2, num_heads=4, d_head=3)


@test_case(name="one head: head 0 is all of M")
@checks.kinds("one head")
def one_head(split_heads):
    _check(split_heads, 206, n=4, num_heads=1, d_head=5)


@test_case(name="ValueError when the feature width is not num_heads * d_head, heads when it is")
@checks.kinds("ValueError: M's width is not num_heads * d_head")
def wrong_width(split_heads):
    # A refusal counts only beside a right answer (raising whatever the input earns nothing),
    # on an input simple enough that a mistake charged by the other cases is not charged again:
    # one token, heads one feature wide, where a reshape without transpose is right too.
    _check(split_heads, 205, n=1, num_heads=3, d_head=1)
    M = _features(204, 5, 6)
    for num_heads, d_head in ((4, 2), (2, 4), (4, 1)):  # too wide, too wide, too narrow
        checks.expect_value_error(
            lambda h=num_heads, d=d_head: split_heads(M, h, d),
            "when M's last axis is not num_heads * d_head wide",
        )


@test_case(
    name="ValueError also when M's entries would fill a reshape into heads of the wrong width, "
    "heads when the width fits"
)
@checks.kinds("ValueError: a reshape would not fail")
def wrong_width_that_reshapes(split_heads):
    # M has 24 entries: M.reshape(-1, num_heads, d_head) succeeds for each of these, and
    # M.reshape(n, num_heads, -1) or M.reshape(n, -1, d_head) for some; only a check of
    # M.shape[-1] against num_heads * d_head refuses them all. Beside a right answer, as above.
    _check(split_heads, 208, n=1, num_heads=4, d_head=1)
    M = _features(207, 4, 6)
    for num_heads, d_head in ((4, 3), (2, 4), (3, 4)):
        checks.expect_value_error(
            lambda h=num_heads, d=d_head: split_heads(M, h, d),
            "when M's last axis is not num_heads * d_head wide, even where M's entries "
            "could be reshaped into heads of that size",
        )
