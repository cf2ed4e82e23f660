"""The trusted comparison helpers: exact shapes and types, dtype-aware tolerances, messages that
describe without revealing."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mha_grader.errors import NotAttempted, StudentRaised
from mha_grader.grading import checks as compare

EXPECTED = np.random.default_rng(0).standard_normal((2, 3, 3))


def raised(exc_type: str, message: str = "") -> StudentRaised:
    mro = [exc_type, "Exception", "BaseException"]
    if exc_type == "ValueError":
        mro = ["ValueError", "Exception", "BaseException"]
    return StudentRaised(exc_type, mro, message)


def fails(call, *fragments: str) -> str:
    with pytest.raises(AssertionError) as info:
        call()
    text = str(info.value)
    for fragment in fragments:
        assert fragment in text, text
    return text


def test_exact_values_pass_and_come_back():
    assert compare.check_close(EXPECTED.copy(), EXPECTED, "x", "(h, n, n)") is not None


def test_a_broadcastable_shape_is_rejected():
    # np.allclose would accept (n, n) against (h, n, n) when every head equals it.
    same = np.stack([EXPECTED[0], EXPECTED[0]])
    fails(
        lambda: compare.check_close(same[0], same, "w", "(num_heads, n, n)"),
        "(num_heads, n, n)",
        "an array with 2 axes",
    )


@pytest.mark.parametrize(
    "value, fragment",
    [
        (EXPECTED.tolist(), "a list"),
        (None, "return` missing"),
        (EXPECTED.astype(int), "floating-point"),
        (EXPECTED.astype(np.float16), "float16"),
        (EXPECTED.astype(complex), "floating-point"),
    ],
)
def test_wrong_types_are_named(value, fragment):
    fails(lambda: compare.check_close(value, EXPECTED, "x", "(h, n, n)"), fragment)


def test_an_object_claiming_equality_is_not_an_array():
    class Liar:
        def __eq__(self, other):
            return True

    fails(lambda: compare.check_close(Liar(), EXPECTED, "x", "(h, n, n)"), "NumPy array")


def test_an_ndarray_subclass_is_not_accepted():
    class Sub(np.ndarray):
        def __eq__(self, other):
            return np.ones(self.shape, bool)

    fails(lambda: compare.check_close(EXPECTED.view(Sub), EXPECTED, "x", "(h, n, n)"), "NumPy")


def test_float32_rounding_passes_and_real_errors_fail():
    compare.check_close(EXPECTED.astype(np.float32), EXPECTED, "x", "(h, n, n)")
    off = EXPECTED * (1 + 1e-3)
    fails(lambda: compare.check_close(off, EXPECTED, "x", "(h, n, n)"), "wrong values")


def test_strict_demands_float64_precision_from_float64_results():
    rounded = EXPECTED.astype(np.float32).astype(np.float64)
    compare.check_close(rounded, EXPECTED, "W", "(d, d)")
    fails(lambda: compare.check_close(rounded, EXPECTED, "W", "(d, d)", strict=True), "wrong")
    compare.check_close(EXPECTED * (1 + 1e-12), EXPECTED, "W", "(d, d)", strict=True)


def test_tolerance_scales_with_the_magnitude_of_the_expected_values():
    big = EXPECTED * 1e6
    compare.check_close(big + 1.0, big, "x", "(h, n, n)")  # 1 in 1e6: within float32 rounding
    fails(lambda: compare.check_close(EXPECTED + 1.0, EXPECTED, "x", "(h, n, n)"), "wrong")


def test_nan_is_reported_with_the_hint_and_without_values():
    bad = EXPECTED.copy()
    bad[1, 2, 0] = np.nan
    text = fails(
        lambda: compare.check_close(bad, EXPECTED, "w", "(h, n, n)", nan_hint="Subtract max."),
        "one entry is nan or infinite",
        "Subtract max.",
    )
    assert f"{EXPECTED[0, 0, 0]:.3f}" not in text


def test_wrong_values_are_told_in_classes_of_share_spread_and_size_not_in_numbers():
    off = EXPECTED.copy()
    off[1, 2, 0] += 5.0
    text = fails(
        lambda: compare.check_close(off, EXPECTED, "w", "(h, n, n)", ("head", "query", "key")),
        "one entry is off",
        "some heads, not all",
        "more than 10%",
    )
    assert not re.search(r"\d\.\d", text) and "2, 0" not in text
    slightly = EXPECTED * (1 + 5e-4)
    # a small difference: from arithmetic less precise than asked, or a formula that differs
    # slightly (never declared one of the two: a soft cap on the scores moves them that little)
    text = fails(
        lambda: compare.check_close(slightly, EXPECTED, "w", "(h, n, n)"),
        "less precise than asked",
        "a formula that differs slightly",
    )
    assert "entries are off" in text


def test_a_shape_is_told_against_the_contracts_axis_names_never_in_the_codes_numbers():
    text = fails(
        lambda: compare.check_close(
            np.zeros((EXPECTED.shape[1], EXPECTED.shape[0], 3)), EXPECTED, "w", "(h, n, m)"
        ),
        "in another order, as if (n, h, m)",
    )
    assert "(3, 2, 3)" not in text
    text = fails(lambda: compare.check_close(np.zeros((7, 1234567, 3)), EXPECTED, "w", "(h, n, m)"))
    assert "axis 0 (h) and axis 1 (n)" in text and "1234567" not in text and "7" not in text


def test_pair_float_bool_and_int_checks_are_exact_about_types():
    assert compare.check_pair((1, 2), "f", "a", "b") == (1, 2)
    fails(lambda: compare.check_pair((1, 2, 3), "f", "a", "b"), "tuple (a, b)")
    assert compare.check_float(np.float32(0.5), "d") == 0.5
    fails(lambda: compare.check_float(True, "d"), "float")
    fails(lambda: compare.check_float(np.array([0.5]), "d"), "float(...)")
    assert compare.check_bool(np.bool_(True), "m") is True
    fails(lambda: compare.check_bool(1, "m"), "bool")
    assert compare.check_int(np.int64(3), "k") == 3
    fails(lambda: compare.check_int(True, "k"), "whole number")
    fails(lambda: compare.check_int(3.0, "k"), "whole number")


def test_expect_value_error_accepts_value_error_and_its_subclasses():
    def raise_(e):
        raise e

    compare.expect_value_error(lambda: raise_(raised("ValueError", "h=5 does not divide")), "x")
    sub = StudentRaised("MyError", ["ValueError", "Exception", "BaseException"], "bad 5")
    compare.expect_value_error(lambda: raise_(sub), "x", must_mention=["5"])


def test_expect_value_error_rejects_other_outcomes():
    def raise_(e):
        raise e

    fails(lambda: compare.expect_value_error(lambda: 42, "when bad"), "a value of type int")
    fails(
        lambda: compare.expect_value_error(lambda: raise_(raised("TypeError")), "when bad"),
        "raised Python's TypeError instead",
    )
    fails(
        lambda: compare.expect_value_error(
            lambda: raise_(raised("ValueError", "num_heads 15 or 2.5 is bad")), "x", ["5"]
        ),
        "does not name the offending value",
    )
    with pytest.raises(NotAttempted):
        compare.expect_value_error(lambda: raise_(NotAttempted("not attempted")), "x")


def test_allclose_agrees_with_numpy_on_values_near_and_beyond_tolerance_and_non_finite():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((3, 4))
    cases = [b.copy(), b + 1e-12, b + 1e-3, b * (1 + 2e-6), -b]
    for special in (np.nan, np.inf, -np.inf):
        for where in ("a", "b", "both"):
            a2, b2 = b.copy(), b.copy()
            if where in ("a", "both"):
                a2[1, 2] = special
            if where in ("b", "both"):
                b2[1, 2] = special
            cases.append((a2, b2))
    seen = set()
    for case in cases:
        a, bb = case if isinstance(case, tuple) else (case, b)
        for rtol, atol in ((1e-6, 1e-9), (1e-4, 1e-9), (0.0, 0.0)):
            want = bool(np.allclose(a, bb, rtol=rtol, atol=atol))
            assert compare.allclose(a, bb, rtol, atol) is want, (a, bb, rtol, atol)
            seen.add(want)
    assert seen == {True, False}  # both outcomes were exercised
