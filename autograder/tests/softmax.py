"""Hidden tests for softmax(x, axis=-1). Trusted side only: never visible to student code."""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader.grading import checks
from solutions import multihead as ref

name = "softmax"


@cache
def _scores(seed: int, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 2.0).astype(dtype)


@cache
def _large_scores() -> np.ndarray:
    """Scores near +-1e4 with small spreads, exactly representable in float32 (so float32
    arithmetic stays exact when it subtracts the maximum)."""
    rng = np.random.default_rng(104)
    x = rng.standard_normal((4, 6)) * 3.0 + np.array([[9980.0], [-9980.0], [5000.0], [-9990.0]])
    x[2, ::2] -= 1e4  # one row mixes large positive and large negative scores
    return x.astype(np.float32).astype(np.float64)


@cache
def _expected(x_key: tuple, axis: int | None) -> np.ndarray:
    """The reference result, once per process: a batch grades many submissions."""
    make, *args = x_key
    return ref.softmax(make(*args), axis=-1 if axis is None else axis)


def _check(softmax, x_key: tuple, axis: int | None, what: str, axes, **kw) -> None:
    """x_key = (input maker, *its arguments): the input is made (and cached) from it."""
    make, *args = x_key
    x = make(*args)
    result = softmax(x) if axis is None else softmax(x, axis=axis)
    checks.check_close(result, _expected(x_key, axis), what, "the input's shape", axes, **kw)


@test_case(name="a 2-D array is normalised along the last axis by default, x left unmodified")
@checks.kinds("a 2-D array, the default axis", "the input left unmodified")
def default_axis(softmax):
    _check(
        softmax,
        (_scores, 101, (4, 6)),
        None,
        "softmax(x) of a (rows, columns) array",
        ("row", "column"),
    )
    checks.check_unmodified(softmax, "softmax(x)")


@test_case(name="a square array is normalised along each row")
@checks.kinds("a square array")
def square(softmax):
    _check(softmax, (_scores, 102, (5, 5)), None, "softmax(x) of a square array", ("row", "column"))


@test_case(name="axis=0 normalises each column")
@checks.kinds("axis=0")
def axis_zero(softmax):
    _check(softmax, (_scores, 103, (5, 3)), 0, "softmax(x, axis=0)", ("row", "column"))


@test_case(name="a 1-D array is normalised along its only axis")
@checks.kinds("a 1-D array")
def one_axis(softmax):
    _check(softmax, (_scores, 107, (7,)), None, "softmax(x) of a 1-D array", ("entry",))


@test_case(name="a 3-D array is normalised along the last axis by default (as attention calls it)")
@checks.kinds("a 3-D array, the default axis")
def last_axis_of_three(softmax):
    _check(
        softmax,
        (_scores, 108, (3, 2, 5)),
        None,
        "softmax(x) of a 3-D array",
        ("block", "row", "column"),
    )


@test_case(name="a 3-D array is normalised along the middle axis (axis=1)")
@checks.kinds("a 3-D array, axis=1")
def middle_axis(softmax):
    _check(
        softmax,
        (_scores, 105, (2, 4, 3)),
        1,
        "softmax(x, axis=1) of a 3-D array",
        ("block", "row", "column"),
    )


@test_case(name="scores as large as 1e4 in magnitude give finite, correct weights")
@checks.kinds("scores as large as 1e4")
def large_scores(softmax):
    _check(
        softmax,
        (_large_scores,),
        None,
        "softmax(x) of large scores",
        ("row", "column"),
        nan_hint=checks.OVERFLOW_HINT,
    )


@test_case(name="float32 scores are handled to float32 precision")
@checks.kinds("float32 scores")
def float32_input(softmax):
    x = (_scores, 106, (3, 7), np.float32)
    _check(softmax, x, -1, "softmax(x, axis=-1) of a float32 array", ("row", "column"))
