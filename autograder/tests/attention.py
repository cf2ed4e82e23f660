"""Hidden tests for attention(Q, K, V). Trusted side only.

Each check carries an error forward (``mha_grader.grading.carry``, with the case's ``case``):
a result that is wrong only because the student's own softmax is wrong keeps its points,
and says so.
"""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader.grading import carry, checks
from solutions import multihead as ref

name = "attention"
LEAD = ("batch", "head")  # labels of leading axes, for messages


@cache
def _qkv(seed: int, lead: tuple[int, ...], n: int, m: int, d_k: int, d_v: int, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((*lead, n, d_k))
    K = rng.standard_normal((*lead, m, d_k))
    V = rng.standard_normal((*lead, m, d_v))
    return tuple(a.astype(dtype) for a in (Q, K, V))


@cache
def _large_qkv():
    """Scores near +-9000 that differ by a few units, so the weights are spread over several keys.

    Integer queries and keys with d_k = 4 make every score an exact multiple of 0.5, so float32
    arithmetic computes them exactly too: only the softmax is under test.
    """
    big = np.array([60.0, 60.0, 60.0])
    keys = [
        [[*big, 0], [*big, 1], [*big, 2], [*big, 3], [*big, -1]],
        [[*big, 0], [*-big, 0], [*big, 3], [0, 0, 0, 5], [*-big, -4]],
    ]
    queries = [
        [[100, 100, 100, 1], [-100, -100, -100, 2], [-100, -100, -100, -1], [100, -100, 0, 3]],
        [[100, 100, 100, 1], [-100, -100, -100, 1], [100, 100, 100, -2], [0, 0, 0, 7]],
    ]
    V = np.random.default_rng(405).standard_normal((2, 5, 3))
    return np.array(queries, dtype=float), np.array(keys, dtype=float), V


@cache
def _expected(key: tuple):
    """The reference (out, weights), once per process: a batch grades many submissions."""
    make, *args = key
    return ref.attention(*make(*args))


def _check(case, attention, softmax, key: tuple, lead_axes: int, **kw) -> None:
    """key = (input maker, *its arguments): the inputs are made (and cached) from it."""
    make, *args = key
    inputs = make(*args)
    lead = LEAD[len(LEAD) - lead_axes :] if lead_axes else ()

    def verify(result, expected) -> None:
        out, weights = checks.check_pair(result, "attention(Q, K, V)", "out", "weights")
        expected_out, expected_weights = expected
        checks.check_close(
            weights,
            expected_weights,
            "attention's `weights`",
            "(..., n, m)",
            (*lead, "query", "key"),
            **kw,
        )
        checks.check_close(
            out,
            expected_out,
            "attention's `out`",
            "(..., n, d_v)",
            (*lead, "query", "feature"),
            **kw,
        )

    carry.check(
        case,
        "attention",
        attention,
        inputs,
        verify,
        _expected(key),
        {"softmax": (softmax, ref.softmax)},
    )


@test_case(name="one head: n queries, m keys (n != m) and d_k != d_v; Q, K, V unmodified")
@checks.kinds("one head, n != m and d_k != d_v", "the inputs left unmodified")
def rectangular(attention, softmax, case):
    _check(case, attention, softmax, (_qkv, 401, (), 4, 6, 3, 5), lead_axes=0)
    checks.check_unmodified(attention, "attention(Q, K, V)")


@test_case(name="square case: n == m == d_k == d_v")
@checks.kinds("one head, n == m == d_k == d_v")
def square(attention, softmax, case):
    _check(case, attention, softmax, (_qkv, 402, (), 4, 4, 4, 4), lead_axes=0)


@test_case(name="stacked heads: a leading head axis is kept apart")
@checks.kinds("a leading head axis (3-D)")
def head_axis(attention, softmax, case):
    _check(case, attention, softmax, (_qkv, 403, (3,), 5, 5, 2, 2), lead_axes=1)


@test_case(name="two leading batch axes, n != m, d_k != d_v")
@checks.kinds("two leading axes (4-D)")
def two_batch_axes(attention, softmax, case):
    _check(case, attention, softmax, (_qkv, 404, (2, 3), 4, 6, 5, 2), lead_axes=2)


@test_case(name="scores as large as 1e4 in magnitude give finite, correct results")
@checks.kinds("scores as large as 1e4")
def large_scores(attention, softmax, case):
    _check(case, attention, softmax, (_large_qkv,), lead_axes=1, nan_hint=checks.OVERFLOW_HINT)


@test_case(name="float32 inputs are handled to float32 precision")
@checks.kinds("float32 inputs")
def float32_inputs(attention, softmax, case):
    _check(case, attention, softmax, (_qkv, 406, (2,), 3, 5, 4, 3, np.float32), lead_axes=1)
