"""Public checks for softmax(x, axis=-1). The hidden tests use other inputs and more cases."""

import numpy as np
from otter.test_files import test_case

name = "softmax"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _within_float32(a, b):
    """Whether a float32 result is the float64 one to float32 precision, as grading compares:
    within 1e-4 of the largest magnitude of the float64 result."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.abs(a - b).max() <= 1e-4 * np.abs(b).max())


def _show(x):
    """What a value is, for a message: type, shape, dtype and a short excerpt."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, precision=3, threshold=8, edgeitems=2).replace("\n", "")
        return f"a {x.dtype} array of shape {x.shape}: {text}"
    if x is None:
        return "None (is a `return` missing?)"
    return f"a {type(x).__name__}: {str(x)[:80]}"


def _array_like(out, x, what):
    assert isinstance(out, np.ndarray), f"{what}: expected a NumPy array, got {_show(out)}"
    assert out.shape == x.shape, (
        f"{what}: expected the input's shape {x.shape}, got shape {out.shape}. "
        "Softmax changes values, never the shape: keep the reduced axis with keepdims=True."
    )


def _call(softmax, x, **kwargs):
    """softmax(x, **kwargs), turning the classic broadcasting error into a hint."""
    try:
        return softmax(x, **kwargs)
    except ValueError as e:
        if "broadcast" not in str(e):
            raise
        raise AssertionError(
            f"softmax failed on an input of shape {x.shape} ({e}). A max or sum taken without "
            "keepdims=True loses the reduced axis and no longer lines up with x: pass "
            "keepdims=True so that it broadcasts back along `axis`."
        ) from e


@test_case()
@kinds("a 1-D array")
def test_worked_values(softmax):
    # exp(log 1), exp(log 2), exp(log 3) are 1, 2, 3: the weights are 1/6, 2/6, 3/6.
    x = np.log(np.array([1.0, 2.0, 3.0]))
    out = _call(softmax, x)
    _array_like(out, x, "softmax(log([1, 2, 3]))")
    assert np.allclose(out, [1 / 6, 2 / 6, 3 / 6]), (
        f"softmax(log([1, 2, 3])) should be [1/6, 1/3, 1/2] (exp turns the inputs back into "
        f"1, 2, 3, then each is divided by their sum 6); got {_show(out)}"
    )
    out = _call(softmax, np.zeros(4))
    assert np.allclose(out, 0.25), f"equal scores should share the weight equally: got {_show(out)}"


@test_case()
@kinds("a 2-D array, the default axis")
def test_rows_sum_to_one_on_the_last_axis(softmax):
    x = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]])  # 2 rows of 3: not square on purpose
    out = _call(softmax, x)
    _array_like(out, x, "softmax of a (2, 3) array")
    assert np.all((out >= 0) & (out <= 1)), f"every weight must lie in [0, 1]; got {_show(out)}"
    rows, cols = out.sum(axis=-1), out.sum(axis=0)
    if not np.allclose(rows, 1):
        hint = ""
        if np.allclose(cols, 1):
            hint = " The columns sum to 1 instead: did you normalise over the wrong axis?"
        elif np.isclose(out.sum(), 1):
            hint = (
                " The whole array sums to 1: did you normalise over every entry at once"
                " instead of along the axis?"
            )
        raise AssertionError(
            f"with the default axis=-1 each row must sum to 1; the rows sum to {_show(rows)}."
            + hint
        )


@test_case()
@kinds("axis=0")
def test_axis_argument_is_used(softmax):
    x = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]])
    out = _call(softmax, x, axis=0)
    _array_like(out, x, "softmax(x, axis=0) on a (2, 3) array")
    if not np.allclose(out.sum(axis=0), 1):
        hint = ""
        if np.allclose(out.sum(axis=-1), 1):
            hint = " The rows sum to 1 instead: is the `axis` argument ignored?"
        raise AssertionError(
            f"softmax(x, axis=0) must make each column sum to 1; the columns sum to "
            f"{_show(out.sum(axis=0))}.{hint}"
        )


@test_case()
@kinds("a square array")
def test_square_input_normalises_each_row(softmax):
    # On a square array a max or sum taken without keepdims still broadcasts, along the wrong axis.
    x = np.array([[0.0, 1.0, 2.0], [5.0, 0.0, 0.0], [1.0, 1.0, -3.0]])
    out = _call(softmax, x)
    _array_like(out, x, "softmax of a (3, 3) array")
    assert np.allclose(out.sum(axis=-1), 1), (
        f"on a square (3, 3) input each row must sum to 1; the rows sum to "
        f"{_show(out.sum(axis=-1))}. A max or sum taken without keepdims=True has shape (3,) "
        "and is subtracted from (or divides) every row instead of its own row."
    )


@test_case()
@kinds("a 3-D array, the default axis", "a 3-D array, axis=1")
def test_leading_axes(softmax):
    x = np.arange(24, dtype=float).reshape(2, 3, 4) / 7.0
    out = _call(softmax, x)
    _array_like(out, x, "softmax of a (2, 3, 4) array")
    assert np.allclose(out.sum(axis=-1), 1), (
        f"on a (2, 3, 4) array the last axis must sum to 1 for every (i, j); got sums "
        f"{_show(out.sum(axis=-1))}"
    )
    out = _call(softmax, x, axis=1)
    _array_like(out, x, "softmax(x, axis=1) on a (2, 3, 4) array")
    assert np.allclose(out.sum(axis=1), 1), (
        f"softmax(x, axis=1) on a (2, 3, 4) array must sum to 1 along axis 1; got sums "
        f"{_show(out.sum(axis=1))}"
    )


@test_case()
@kinds("scores as large as 1e4")
def test_large_scores_stay_finite(softmax):
    x = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4 + np.log(2.0), -1e4 - 50.0]])
    # Scores float32 holds exactly (as the grader's are): a softmax computed in float32 inside
    # is right here too, to float32's precision, and the weights expected follow from them.
    x = x.astype(np.float32).astype(np.float64)
    out = _call(softmax, x)
    _array_like(out, x, "softmax of scores as large as 1e4")
    assert np.all(np.isfinite(out)), (
        f"scores of magnitude 1e4 gave {_show(out)}: exp(1e4) overflows to inf and exp(-1e4) "
        "underflows to 0, so inf/inf or 0/0 gives nan. Subtract the maximum along the axis first: "
        "softmax does not change when every score is shifted by the same amount."
    )
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    expected = shifted / shifted.sum(axis=-1, keepdims=True)  # about [[1, 0, 0], [1/3, 2/3, 0]]
    assert np.allclose(out, expected, atol=1e-6), (
        f"for scores [[1e4, 0, -1e4], [-1e4, -1e4 + log 2, -1e4 - 50]] the weights should be "
        f"about [[1, 0, 0], [1/3, 2/3, 0]]; got {_show(out)}"
    )


@test_case()
@kinds("float32 scores")
def test_float32_scores(softmax):
    x = np.array([[0.5, -1.25, 2.0, 0.0], [3.0, 3.0, -2.5, 1.0]])
    out = _call(softmax, x.astype(np.float32))
    _array_like(out, x, "softmax of a float32 (2, 4) array")
    assert out.dtype in (np.float32, np.float64), (
        f"a float32 input may give float32 or float64 weights; got {_show(out)} (float16 is too "
        "coarse to check)"
    )
    # The same scores in float64, through your own softmax: float32 keeps about 7 digits.
    assert _within_float32(out, _call(softmax, x)), (
        f"float32 scores should give the weights the same scores give in float64, to float32 "
        f"precision; got {_show(out)} for float32 and {_show(_call(softmax, x))} for float64"
    )


@test_case()
@kinds("the input left unmodified")
def test_input_is_not_modified(softmax):
    x = np.array([[3.0, 1.0, 2.0], [0.0, 4.0, -1.0]])
    before = x.copy()
    _call(softmax, x)
    assert np.array_equal(x, before), (
        f"softmax changed its input in place: it was {_show(before)}, afterwards {_show(x)}. "
        "Write `shifted = x - x.max(...)` rather than `x -= ...`."
    )
