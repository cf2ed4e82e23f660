"""Hidden tests for distinct_head_pairs(weights, atol=1e-6). Trusted side only."""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader import shown
from mha_grader.grading import checks
from solutions import multihead as ref

name = "distinct_head_pairs"


@cache
def _patterns(seed: int, num_heads: int, n: int) -> np.ndarray:
    """Random attention patterns: every row is a softmax, every head different."""
    return ref.softmax(np.random.default_rng(seed).standard_normal((num_heads, n, n)) * 2.0)


@cache
def _with_copy(seed: int) -> np.ndarray:
    """Five random heads, except that head 4 copies head 2."""
    w = _patterns(seed, 5, 3).copy()
    w[4] = w[2]
    return w


@cache
def _with_copies() -> np.ndarray:
    """Five heads: head 3 copies head 0 and head 4 copies head 1."""
    w = _patterns(601, 5, 4).copy()
    w[3], w[4] = w[0], w[1]
    return w


@cache
def _copies_of_one(seed: int, num_heads: int) -> np.ndarray:
    """``num_heads`` copies of one random pattern (one head when ``num_heads`` is 1)."""
    return np.repeat(_patterns(seed, 1, 4), num_heads, axis=0)


@cache
def _near(shifts: tuple[tuple[int, int, float], ...]) -> np.ndarray:
    """Head 0 is a random pattern; head k copies it with one entry (row, column) shifted by
    `shift`: one entry only, so a mean over the entries would hide the difference."""
    base = _patterns(602, 1, 5)[0]
    heads = [base]
    for row, col, shift in shifts:
        h = base.copy()
        h[row, col] += shift
        heads.append(h)
    return np.stack(heads)


@cache
def _near_one() -> np.ndarray:
    """Five heads that put most of each query's weight on one key (entries near 0.95): head 1
    differs from head 0 by 4 atol in one entry, head 3 from head 2 by 8 atol, head 4 from head 0
    by half of atol (the same pattern); heads 0 and 2 are far apart. atol alone decides here: a
    relative tolerance of 1e-5 (allclose's default) would call heads 0 and 1, and heads 2 and 3,
    the same."""
    base = _patterns(604, 2, 4)
    sharp = 0.95 * np.eye(4)[[1, 3, 0, 2]] + 0.05 * base[0]
    other = 0.95 * np.eye(4)[[2, 0, 3, 1]] + 0.05 * base[1]
    heads = [sharp, sharp.copy(), other, other.copy(), sharp.copy()]
    heads[1][0, 1] += 4e-6
    heads[3][2, 3] -= 8e-6
    heads[4][3, 0] += 0.5e-6  # within atol of head 0: the same pattern, so not every pair is listed
    return np.stack(heads)


@cache
def _expected(key: tuple, atol: float | None) -> list[tuple[int, int]]:
    """The reference pairs, once per process: a batch grades many submissions."""
    make, *args = key
    w = make(*args)
    return ref.distinct_head_pairs(w) if atol is None else ref.distinct_head_pairs(w, atol=atol)


def _run(distinct_head_pairs, key: tuple, atol: float | None, situation: str) -> None:
    """key = (pattern maker, *its arguments); atol None means the default is not passed."""
    make, *args = key
    w = make(*args)
    pairs = distinct_head_pairs(w) if atol is None else distinct_head_pairs(w, atol=atol)
    _check(pairs, _expected(key, atol), situation)


def _check(pairs, expected: list[tuple[int, int]], situation: str) -> None:
    if type(pairs) is not list:
        raise AssertionError(
            f"distinct_head_pairs should return a list of (i, j) tuples; your code returned "
            f"{checks.describe(pairs)}."
        )
    got = []
    for item in pairs:
        if type(item) is not tuple or len(item) != 2:
            raise AssertionError(
                "every item of the list should be a tuple (i, j) of two head indices; your list "
                f"holds {checks.describe(item)}."
            )
        got.append(tuple(checks.check_int(k, "each head index") for k in item))
    if any(i >= j for i, j in got):
        raise AssertionError(
            "every pair should be listed once, as (i, j) with i < j; your list holds a pair "
            "with i >= j."
        )
    if len(set(got)) != len(got):
        raise AssertionError("your list holds the same pair more than once.")
    extra = set(got) - set(expected)
    missing = set(expected) - set(got)
    problems = []
    if extra:
        problems.append(
            f"it lists {shown.count(len(extra))} pair(s) of heads whose patterns are all "
            "within atol of each other (those count as the same)"
        )
    if missing:
        problems.append(
            f"it misses {shown.count(len(missing))} pair(s) of heads that differ by more than "
            "atol somewhere"
        )
    if problems:
        raise AssertionError(f"for {situation}, " + "; ".join(problems) + ".")
    if got != expected:
        raise AssertionError(
            f"for {situation}, the right pairs are listed, but not in lexicographic order "
            "(sorted by i, then by j)."
        )


@test_case(name="every pair (i, j), i < j, of different heads, in lexicographic order")
@checks.kinds("some heads copy others", "every head differs", "the input left unmodified")
def all_different(distinct_head_pairs):
    # Five heads, one of them a copy: listing every pair, or none, is wrong here; then four heads
    # that all differ, where every pair is listed.
    _run(distinct_head_pairs, (_with_copy, 603), None, "five heads, one a copy of another")
    _run(distinct_head_pairs, (_patterns, 605, 4, 3), None, "four heads that all differ")
    checks.check_unmodified(distinct_head_pairs, "distinct_head_pairs(weights)")


@test_case(name="identical heads are left out (also when all are alike, or there is only one head)")
@checks.kinds("some heads copy others", "every head the same, or a single head")
def identical_heads(distinct_head_pairs):
    # Copies among different heads first (an empty list is wrong here), then heads that are all
    # the same pattern, and a single head: no pair at all.
    _run(distinct_head_pairs, (_with_copies,), None, "five heads, two of them copies")
    _run(distinct_head_pairs, (_copies_of_one, 606, 4), None, "four copies of one head")
    _run(distinct_head_pairs, (_copies_of_one, 607, 1), None, "a single head")


@test_case(name="atol decides: a difference within atol is the same pattern, beyond it is not")
@checks.kinds("an atol given")
def custom_atol(distinct_head_pairs):
    # Head 1 is 0.6 atol from head 0, head 2 is 1.5 atol from head 0 but 0.9 atol from head 1,
    # head 3 is 1.2 atol from head 0 elsewhere: "same" is not transitive.
    shifts = ((1, 3, 0.6e-3), (1, 3, 1.5e-3), (4, 0, 1.2e-3))
    _run(distinct_head_pairs, (_near, shifts), 1e-3, "heads that differ by about atol")


@test_case(name="the default atol is 1e-6")
@checks.kinds("the default atol, 1e-6")
def default_atol(distinct_head_pairs):
    shifts = ((0, 1, 0.5e-6), (2, 3, 5e-6))
    _run(distinct_head_pairs, (_near, shifts), None, "heads that differ by about 1e-6")


@test_case(name="atol alone decides, also where the weights are near 1 (no relative tolerance)")
@checks.kinds("no relative tolerance, weights near 1")
def absolute_tolerance(distinct_head_pairs):
    _run(distinct_head_pairs, (_near_one,), None, "heads whose weights near 1 differ by a few atol")
