"""Plain, specific explanations of a wrong result that matches no catalogued mistake.

They speak of shapes, axes, heads and the size of the error, in the words of ``shown``: never of
expected values, nor of a number the student's code chose (by the time the diagnosis runs, that
code has seen the hidden inputs, and could spell them out in a shape, a count or an error size).
The probes' own shapes are public and are shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import shown
from ..errors import StudentCodeError
from .compare import Outcome, as_array, same_array


def error_text(e: BaseException) -> str:
    """What a failed call did, in the grader's words (``str`` of a StudentCodeError)."""
    if not isinstance(e, StudentCodeError):
        return "failed"
    return f"{e}. {e.hint}" if e.hint else str(e)


def _axis_names(ndim: int, names: tuple[str, ...]) -> list[str]:
    """Name the trailing axes with ``names``; leading extra axes are batch axes."""
    names = names[-ndim:] if ndim <= len(names) else names
    return ["batch"] * (ndim - len(names)) + list(names)


def array_diff(got: Any, want: np.ndarray, names: tuple[str, ...] = ()) -> str:
    """What differs between an array result and the expected one, without showing values."""
    a = as_array(got)
    if a is None:
        return f"returned {shown.value(got)}, not a numeric array"
    if a.shape != want.shape:
        return f"returned {shown.shape_difference(a.shape, want.shape, public=True)}"
    a = a.astype(np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        return shown.portion(int(bad.sum()), a.size, "nan or inf")
    err = np.abs(a - want)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    text = f"off {shown.error_size(float(err.max()), scale)}"
    if a.ndim == 0:
        return text
    if np.allclose(np.sort(a, axis=None), np.sort(want, axis=None), rtol=1e-4, atol=1e-9):
        text += ", though it holds the right values, in the wrong places"
    labels = _axis_names(a.ndim, names)
    if a.ndim >= 2 and labels[0] == "head":
        wrong = [not same_array(a[h], want[h]) for h in range(a.shape[0])]
        spread = shown.spread(wrong, "head")
        text += f"; it differs {spread}" if spread else ""
        if spread and not all(wrong):
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
    above, below = bool((s > 1 + 1e-6).any()), bool((s < 1 - 1e-6).any())
    how = "more than 1" if above and not below else "less than 1" if below and not above else ""
    return f"the entries along axis {axis} do not sum to 1" + (
        f" (they sum to {how})" if how else ""
    )


def on_probe(probe) -> str:
    """Where a diagnosis saw what it says: on an input of its own, said as such. The diagnosis
    is told on every failing case of a question, and its probe is none of them (a case line
    says the case's own inputs)."""
    return f"on the diagnosis' own input {probe.describe()} (not this case's)"


def first_difference(
    student: list[Outcome], expected: list[Outcome], probes: list, describe
) -> tuple[int, str]:
    """Index of the first probe where the student differs, and a description of how."""
    for i, (s, e) in enumerate(zip(student, expected, strict=True)):
        if not s.ok and e.ok:
            return i, f"{on_probe(probes[i])}: {error_text(s.error)}"
        if s.ok and e.ok:
            try:
                text = describe(s.value, e.value, probes[i])
            except Exception:  # a value too odd to describe in detail
                text = f"returned a {type(s.value).__name__} of an unexpected form"
            if text:
                return i, f"{on_probe(probes[i])}: {text}"
    return -1, "its results differ from the reference's on our own inputs"
