"""Trusted assertion helpers for the hidden tests.

Each helper raises ``AssertionError`` whose text is shown to the student: it says, in words, what
was expected (a shape such as "(num_heads, n, d_head)", a property) and what the student's code
returned, described with ``shown`` (its kind, how its shape differs, which share of entries is
off and by how much, in fixed classes). It never contains a hidden input, an expected value or a
number the student's code chose.

Types are checked with ``type(x) is ...`` and values are compared here, on the trusted side, with
explicit shape checks (``np.allclose`` broadcasts ``(n, n)`` against ``(h, n, n)`` silently), so an
object that claims equality with everything cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mha_check.dtypes import float_dtype_problem

from .. import shown
from ..errors import StudentCodeError, StudentRaised, mentions

# Added to a message when large scores made a result nan or inf.
OVERFLOW_HINT = (
    "Large scores make exp overflow: subtract the maximum along the axis before exp "
    "(softmax does not change when all its inputs are shifted by the same amount)."
)

# Allowed error, relative to the expected array's largest magnitude, by the result's dtype.
# float32 keeps ~7 significant digits and a few hundred operations lose a little more; float64
# keeps ~16. A float64 result may still come from float32 arithmetic (NumPy 2 turns
# `float32_array / np.sqrt(d)` into float64), and float32 arithmetic is a correct answer, so
# float64 results get the float32 tolerance unless a check demands float64 precision (`strict`,
# e.g. weights copied out of a float64 module). No misconception of these exercises produces an
# error this small: they are off by far more than 1e-4.
RTOL = {np.dtype(np.float64): 1e-8, np.dtype(np.float32): 1e-4}
RTOL_OTHER = 1e-8  # longdouble: at least float64 precision


def describe(value: Any) -> str:
    """A short, input-free description of what came back (``shown.value``)."""
    return shown.value(value)


def tolerance(dtype: np.dtype | type, strict: bool = False) -> float:
    """The relative tolerance for a result of ``dtype``: float32 precision at most, unless
    ``strict`` (then the dtype's own precision)."""
    dtype = np.dtype(dtype)
    own = RTOL.get(dtype, RTOL_OTHER)
    return own if strict else max(own, RTOL[np.dtype(np.float32)])


def allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    """``np.allclose(a, b, rtol=rtol, atol=atol)`` for two float arrays: numpy's own test
    (``isclose``: within tolerance of a finite ``b``, or equal; nan never close) without its
    generic wrapper, whose cost dominates on the small arrays the hidden tests compare tens of
    times per submission."""
    with np.errstate(invalid="ignore"):
        close = (np.abs(a - b) <= atol + rtol * np.abs(b)) & np.isfinite(b) | (a == b)
    return bool(close.all())


def check_array(value: Any, what: str, shape_words: str, shape: tuple[int, ...]) -> np.ndarray:
    """Assert ``value`` is a float ndarray of exactly ``shape``; return it.

    ``what`` names the value ("softmax's result"); ``shape_words`` is the expected shape in the
    contract's words, e.g. "(num_heads, n, d_head)".
    """
    if type(value) is not np.ndarray:
        hint = ""
        if type(value) is list:
            hint = " (wrap it with np.array, or keep the NumPy result instead of .tolist())"
        elif type(value).__module__.startswith("torch"):
            hint = " (convert it with .detach().numpy())"
        raise AssertionError(
            f"{what} should be a NumPy array of shape {shape_words}; "
            f"your code returned {describe(value)}{hint}."
        )
    if value.shape != tuple(shape):
        raise AssertionError(
            f"{what} should have shape {shape_words}; your code returned "
            f"{shown.shape_difference(value.shape, tuple(shape), shape_words)}. Check which "
            "axes your code keeps, adds or moves."
        )
    if value.dtype.kind != "f":
        raise AssertionError(
            f"{what} should hold floating-point numbers; your code returned {describe(value)}."
        )
    problem = float_dtype_problem(value.dtype)  # the contract's rule, mha-check's too
    if problem:
        raise AssertionError(f"{what} is {problem}")
    return value


def _spread(bad: np.ndarray, axes: Sequence[str]) -> str:
    """'in every head' / 'in some heads, not all' when the result has a head or batch axis."""
    labels = list(axes)[-bad.ndim :] if axes else []
    labels = [""] * (bad.ndim - len(labels)) + labels
    for i, label in enumerate(labels):
        if label in ("head", "batch"):
            per = bad.any(axis=tuple(a for a in range(bad.ndim) if a != i))
            return shown.spread([bool(b) for b in per], label)
    return ""


def check_close(
    value: Any,
    expected: np.ndarray,
    what: str,
    shape_words: str,
    axes: Sequence[str] = (),
    strict: bool = False,
    nan_hint: str = "",
) -> np.ndarray:
    """Assert ``value`` is a float array shaped like ``expected`` and close to it.

    The tolerance (see ``tolerance``) is relative to the largest magnitude in ``expected``.
    ``axes`` labels the last axes (e.g. ("head", "row", "column")): a head or batch axis lets
    the message say whether every head is wrong or only some; ``nan_hint`` is added to the
    message when the result holds nan or inf.
    """
    value = check_array(value, what, shape_words, expected.shape)
    # The reference is always finite; an expectation carried forward from a student's callee
    # (carry.py) may not be: then the same entries must be nan or infinite, the rest close.
    finite = np.isfinite(expected)
    if not np.array_equal(np.isfinite(value), finite):
        bad = int(np.count_nonzero(~np.isfinite(value) & finite))
        raise AssertionError(
            f"{what} is not finite: {shown.portion(bad, value.size, 'nan or infinite')}; every "
            f"entry should be finite.{' ' + nan_hint if nan_hint else ''}"
        )
    if not finite.all():
        same = np.isnan(value) == np.isnan(expected)
        if not (
            same.all()
            and np.array_equal(
                value[~finite & ~np.isnan(value)], expected[~finite & ~np.isnan(expected)]
            )
        ):
            raise AssertionError(f"{what} is not what your own functions give on these inputs.")
        value, expected = value[finite], expected[finite]
    rtol = tolerance(value.dtype, strict)
    scale = float(np.max(np.abs(expected))) if expected.size else 0.0
    allowed = rtol * (scale if scale > 0 else 1.0)
    err = np.abs(value.astype(np.float64) - expected)
    if expected.size and not float(np.max(err)) <= allowed:
        bad = err > allowed
        spread = _spread(bad, axes)
        raise AssertionError(
            f"{what} has the right shape but wrong values: "
            f"{shown.portion(int(np.count_nonzero(bad)), err.size, 'off')}"
            f"{f' ({spread})' if spread else ''}, {shown.error_size(float(np.max(err)), scale)}."
        )
    return value


def check_pair(value: Any, what: str, first: str, second: str) -> tuple[Any, Any]:
    """Assert ``value`` is a tuple (or list) of exactly two items, e.g. (out, weights)."""
    if type(value) not in (tuple, list) or len(value) != 2:
        raise AssertionError(
            f"{what} should return a tuple ({first}, {second}); your code returned "
            f"{describe(value)}."
        )
    return value[0], value[1]


def check_float(value: Any, what: str) -> float:
    """Assert ``value`` is a real number (Python float or a NumPy float), not a bool; return it."""
    if type(value) is float or (type(value) in (np.float64, np.float32)):
        return float(value)
    hint = " (use float(...) on it)" if type(value) is np.ndarray else ""
    raise AssertionError(f"{what} should be a float; your code returned {describe(value)}{hint}.")


def check_bool(value: Any, what: str) -> bool:
    """Assert ``value`` is a bool (Python or NumPy); return it."""
    if type(value) is bool or type(value) is np.bool_:
        return bool(value)
    raise AssertionError(
        f"{what} should be a bool (True or False); your code returned {describe(value)}."
    )


def check_int(value: Any, what: str) -> int:
    """Assert ``value`` is a whole number (int or a NumPy integer, not a bool); return it."""
    if type(value) is int or (isinstance(value, np.integer) and type(value).__module__ == "numpy"):
        return int(value)
    raise AssertionError(
        f"{what} should be a whole number (int); your code returned {describe(value)}."
    )


def expect_value_error(
    call: Callable[[], Any],
    situation: str,
    must_mention: Sequence[str] = (),
) -> None:
    """Assert that ``call()`` raises ValueError; ``situation`` says when, in words.

    ``must_mention`` lists words or numbers the error message must contain (as whole words), such
    as the offending head count.
    """
    try:
        result = call()
    except StudentRaised as e:
        if not e.is_a(ValueError):
            raise AssertionError(
                f"should raise ValueError {situation}; your code {e} instead. Check the inputs "
                "yourself and raise ValueError with a message that says what is wrong."
            ) from None
        missing = [w for w in must_mention if not mentions(e.message, w)]
        if missing:
            raise AssertionError(
                f"raises ValueError {situation}, as it should, but the message does not name "
                "the offending value; say which value is wrong, so the caller can fix it."
            ) from None
        return
    except StudentCodeError:
        raise
    raise AssertionError(
        f"should raise ValueError {situation}; your code returned {describe(result)} instead."
    )


# What to do instead, when a function changed a torch module it was given.
MODULE_ADVICE = (
    "mha.double() and mha.to(...) convert the module itself, and writing into its weights changes "
    "them for the caller: convert copies of the weights instead, e.g. "
    "`mha.in_proj_weight.detach().double()`."
)


def check_unmodified(fn: Callable, what: str, module: bool = False) -> None:
    """Assert that no call to ``fn`` so far changed its inputs in place (the proxy records it:
    the worker compares every array and module argument before and after the call);
    ``module``: ``fn`` is given a torch module, and the advice is about modules."""
    if not getattr(fn, "inputs_modified", False):
        return
    if module:
        raise AssertionError(
            f"{what} changed its input in place: the caller's module (its weights or layout) "
            f"and arrays must stay as they were (the contract: inputs are never modified). "
            + MODULE_ADVICE
        )
    raise AssertionError(
        f"{what} changed an input array in place: the caller's array must stay as it was "
        "(the contract: inputs are never modified). Work on a new array instead, e.g. "
        "`x = x - x.max(...)` rather than `x -= ...`."
    )


def kinds(*behaviours: str) -> Callable[[Callable], Callable]:
    """Mark what a hidden case checks, in the words the public checks of its question use
    (``exercises/tests/<qid>.py`` marks its checks the same way): each kind the public checks
    test is graded by some hidden case, and each hidden case's kind is in the public checks
    (tests/test_case_kinds.py). Put it below ``@test_case``: it marks the function itself."""

    def mark(case: Callable) -> Callable:
        case.kinds = behaviours
        return case

    return mark
