"""Run a function on probes and compare results, tolerant of float32 arithmetic."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import errors
from .probes import Probe

RTOL = 1e-4  # loose enough for correct float32 arithmetic, far below any catalogued mistake


@dataclass(frozen=True)
class Outcome:
    value: Any = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run(func: Callable, probes: Sequence[Probe]) -> list[Outcome]:
    """Call ``func`` on every probe; exceptions (student or NumPy) become outcomes."""
    results = []
    for p in probes:
        try:
            with np.errstate(all="ignore"):
                results.append(Outcome(value=func(*p.args, **p.kwargs)))
        except (Exception, errors.StudentCodeError) as e:
            results.append(Outcome(error=e))
    return results


def as_array(v: Any) -> np.ndarray | None:
    """A numeric array view of ``v`` (array, scalar or nested list), or None."""
    try:
        a = np.asarray(v)
    except Exception:
        return None
    return a if a.dtype.kind in "biuf" else None


def same_array(a: Any, b: Any) -> bool:
    a, b = as_array(a), as_array(b)
    if a is None or b is None or a.shape != b.shape:
        return False
    a, b = a.astype(np.float64), b.astype(np.float64)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return False
    fa, fb = np.isfinite(a), np.isfinite(b)
    scale = max(1.0, float(np.max(np.abs(b[fb]), initial=0.0)))
    return bool(np.allclose(a[fa], b[fb], rtol=RTOL, atol=1e-6 * scale))


def same(a: Any, b: Any) -> bool:
    """Same value up to float32 rounding: arrays, numbers, tuples/lists, dicts."""
    if isinstance(b, tuple | list) and not isinstance(b, np.ndarray):
        if isinstance(a, tuple | list) and len(a) == len(b):
            if all(isinstance(x, int | float | np.number) for x in (*a, *b)):
                return same_array(a, b)
            return all(same(x, y) for x, y in zip(a, b, strict=True))
        return False
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in b)
    if isinstance(b, bool | np.bool_) or isinstance(a, bool | np.bool_):
        return isinstance(a, bool | np.bool_) and isinstance(b, bool | np.bool_) and a == b
    return same_array(a, b)


def matches(
    student: Sequence[Outcome], candidate: Sequence[Outcome], vacuous: bool = False
) -> bool:
    """The candidate reproduces the student's results: same values, raising on the same probes.

    Unless ``vacuous``, a candidate that raises on every probe explains nothing.
    """
    if not vacuous and not any(c.ok for c in candidate):
        return False
    for s, c in zip(student, candidate, strict=True):
        if s.ok != c.ok or (s.ok and not same(s.value, c.value)):
            return False
    return True
