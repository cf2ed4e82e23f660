"""Plain, specific explanations of a wrong result that matches no catalogued mistake.

They speak of shapes, axes, heads, positions and the size of the error: never of expected values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compare import Outcome, as_array, same_array


def error_text(e: BaseException) -> str:
    return str(e) if str(e) else type(e).__name__


def _axis_names(ndim: int, names: tuple[str, ...]) -> list[str]:
    """Name the trailing axes with ``names``; leading extra axes are batch axes."""
    names = names[-ndim:] if ndim <= len(names) else names
    return ["batch"] * (ndim - len(names)) + list(names)


def array_diff(got: Any, want: np.ndarray, names: tuple[str, ...] = ()) -> str:
    """What differs between an array result and the expected one, without showing values."""
    a = as_array(got)
    if a is None:
        return f"returned {type(got).__name__}, not a numeric array"
    if a.shape != want.shape:
        return f"returned shape {a.shape} where {want.shape} was expected"
    a = a.astype(np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        return f"{int(bad.sum())} of {a.size} entries are nan or inf"
    err = np.abs(a - want)
    if a.ndim == 0:
        return f"off by {float(err):.3g}"
    labels = _axis_names(a.ndim, names)
    idx = np.unravel_index(int(np.argmax(err)), err.shape)
    where = ", ".join(f"{n} {i}" for n, i in zip(labels, idx, strict=True))
    text = f"largest error {float(err.max()):.3g} (at {where})"
    if np.allclose(np.sort(a, axis=None), np.sort(want, axis=None), rtol=1e-4, atol=1e-9):
        text += ", though it holds the right values, in the wrong places"
    if a.ndim >= 2 and labels[0] == "head":
        wrong = [h for h in range(a.shape[0]) if not same_array(a[h], want[h])]
        text += f"; heads {wrong} of {a.shape[0]} differ" if wrong else ""
        if wrong and len(wrong) < a.shape[0]:
            text += ", the others are right"
    return text


def sums_text(got: Any, axis: int) -> str:
    """Whether the entries along ``axis`` sum to 1, as softmax's must."""
    a = as_array(got)
    if a is None or a.ndim == 0 or not np.isfinite(a).all():
        return ""
    try:
        s = a.sum(axis=axis)
    except Exception:
        return ""
    if np.allclose(s, 1.0, atol=1e-6):
        return f"the entries along axis {axis} do sum to 1"
    return f"the entries along axis {axis} sum to between {s.min():.3g} and {s.max():.3g}, not 1"


def first_difference(
    student: list[Outcome], expected: list[Outcome], probes: list, describe
) -> tuple[int, str]:
    """Index of the first probe where the student differs, and a description of how."""
    for i, (s, e) in enumerate(zip(student, expected, strict=True)):
        if not s.ok and e.ok:
            return i, f"on inputs {probes[i].describe()}: {error_text(s.error)}"
        if s.ok and e.ok:
            try:
                text = describe(s.value, e.value, probes[i])
            except Exception:  # a value too odd to describe in detail
                text = f"returned a {type(s.value).__name__} of an unexpected form"
            if text:
                return i, f"on inputs {probes[i].describe()}: {text}"
    return -1, "its results differ from the reference's on our own inputs"
