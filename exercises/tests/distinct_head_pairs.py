"""Public checks for distinct_head_pairs(weights, atol=1e-6). The hidden tests use other inputs."""

import numpy as np
from otter.test_files import test_case

name = "distinct_head_pairs"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _show(x):
    """What a value is, for a message: type, length and a short excerpt."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, precision=3, threshold=8, edgeitems=2).replace("\n", "")
        return f"a {x.dtype} array of shape {x.shape}: {text}"
    if x is None:
        return "None (is a `return` missing?)"
    return f"a {type(x).__name__}: {str(x)[:120]}"


def _pattern(seed, n=3):
    """A valid attention pattern (rows >= 0, summing to 1) of shape (n, n)."""
    p = np.random.default_rng(seed).random((n, n)) + 0.1
    return p / p.sum(axis=-1, keepdims=True)


def _check(distinct_head_pairs, weights, expected, what, **kwargs):
    result = distinct_head_pairs(weights, **kwargs)
    assert isinstance(result, list), (
        f"distinct_head_pairs must return a list of (i, j) tuples; for {what} it returned "
        f"{_show(result)}"
    )
    pairs = [tuple(p) if isinstance(p, tuple | list | np.ndarray) else p for p in result]
    assert all(isinstance(p, tuple) for p in result), (
        f"each pair must be a tuple (i, j); for {what} got {_show(result)}"
    )
    if pairs == expected:
        return
    hint = ""
    if sorted(pairs) == expected:
        hint = " Right pairs, wrong order: sort them lexicographically."
    elif any(len(p) == 2 and p[0] >= p[1] for p in pairs):
        hint = " Each pair must have i < j: list (0, 1), never (1, 0) or (0, 0)."
    elif len(pairs) > len(expected) and set(expected) <= set(pairs):
        hint = (
            " Some listed heads are identical within atol: compare the largest |difference| of "
            "two heads' weights with atol."
        )
    elif len(pairs) < len(expected) and set(pairs) <= set(expected):
        hint = (
            " Some heads that differ by more than atol are missing. np.allclose and np.isclose "
            "add a relative tolerance (rtol=1e-5 times the entry) to atol: atol alone decides "
            "here, so compare |difference| <= atol yourself, or pass rtol=0."
        )
    raise AssertionError(f"for {what} expected {expected}, got {result}.{hint}")


def _check_uses_atol(distinct_head_pairs, weights):
    """Heads 1e-3 apart: listed with atol 1e-6 and 1e-4, not with 1e-2. The same pairs for all
    three is a tolerance of the function's own, whatever atol says."""
    try:
        got = [repr(distinct_head_pairs(weights, atol=t)) for t in (1e-6, 1e-4, 1e-2)]
    except Exception:
        return  # what it raises is told by the checks that follow
    assert len(set(got)) > 1, (
        f"for two heads differing by 1e-3, distinct_head_pairs gives {got[0]} with atol=1e-6, "
        "atol=1e-4 and atol=1e-2 alike: it should list (0, 1) for the first two and nothing for "
        "the last. It ignores atol: compare np.max(np.abs(w[i] - w[j])) with the atol passed "
        "in, not with a tolerance of your own."
    )


@test_case()
@kinds("some heads copy others")
def test_docstring_example(distinct_head_pairs):
    a, b = _pattern(0), _pattern(1)
    weights = np.stack([a, b, a])  # heads 0 and 2 identical
    _check(distinct_head_pairs, weights, [(0, 1), (1, 2)], "3 heads where heads 0 and 2 are equal")


@test_case()
@kinds("every head differs", "every head the same, or a single head")
def test_all_different_and_all_equal(distinct_head_pairs):
    weights = np.stack([_pattern(s) for s in range(4)])
    expected = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    _check(distinct_head_pairs, weights, expected, "4 heads that all differ")
    same = np.stack([_pattern(9)] * 3)
    _check(distinct_head_pairs, same, [], "3 identical heads")
    _check(distinct_head_pairs, same[:1], [], "a single head")


@test_case()
@kinds("an atol given", "the default atol, 1e-6")
def test_atol_decides_what_counts_as_equal(distinct_head_pairs):
    a = _pattern(2)
    b = a.copy()
    b[0, 0] += 1e-3  # heads differ by 1e-3 in one entry
    weights = np.stack([a, b])
    _check_uses_atol(distinct_head_pairs, weights)
    _check(distinct_head_pairs, weights, [(0, 1)], "heads differing by 1e-3 with the default atol")
    _check(distinct_head_pairs, weights, [], "heads differing by 1e-3 with atol=1e-2", atol=1e-2)
    c = a + 1e-9  # rounding-level noise everywhere: the same pattern
    _check(distinct_head_pairs, np.stack([a, c]), [], "heads differing by 1e-9 (default atol)")


@test_case()
@kinds("no relative tolerance, weights near 1")
def test_atol_alone_decides_near_one(distinct_head_pairs):
    a = np.full((2, 2), 0.5)
    a[:, 0] = 0.99  # weights near 1 ...
    a[:, 1] = 0.01
    b = a.copy()
    b[0, 0] += 5e-6  # ... that differ by 5 times the default atol
    _check(
        distinct_head_pairs,
        np.stack([a, b]),
        [(0, 1)],
        "heads whose weights near 1 differ by 5e-6 (default atol 1e-6)",
    )


@test_case()
@kinds("the input left unmodified")
def test_input_is_not_modified(distinct_head_pairs):
    weights = np.stack([_pattern(s) for s in range(3)])
    before = weights.copy()
    distinct_head_pairs(weights)
    assert np.array_equal(weights, before), "distinct_head_pairs changed its input in place"
