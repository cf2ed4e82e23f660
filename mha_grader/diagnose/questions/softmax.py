"""softmax: a catalogued mistake (axis, stability, keepdims, global), else what is off."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from numpy.exceptions import AxisError

from solutions import multihead as ref

from ... import errors
from .. import mutants as mut
from .. import probes as pr
from .. import properties
from ..catalogue import CATALOGUE
from ..compare import Outcome, as_array, matches, run, same_array
from ..explain import array_diff, first_difference, sums_text
from ..result import Diagnosis, named
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    probes = pr.softmax_probes()
    student = s.student("softmax", probes)
    expected = trusted(("ref", "softmax"), ref.softmax, probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    mod = [i for i, p in enumerate(probes) if not p.large]
    big = [i for i, p in enumerate(probes) if p.large]
    s_mod = [student[i] for i in mod]
    sub = tuple(probes[i] for i in mod)

    ids: tuple[str, ...] | None = None
    behaviour: Callable | None = None
    axes_said = ""
    if matches(s_mod, [expected[i] for i in mod]):
        ids, behaviour = (), ref.softmax
    # the mutants that differ from a softmax already on moderate scores
    concrete = [((i,), f) for i, fs in mut.SOFTMAX.items() if i not in mut.LARGE_ONLY for f in fs]
    concrete += [(i, f) for i, fs in mut.SOFTMAX_COMBINED.items() for f in fs]
    for f_ids, f in concrete:
        if ids is None and matches(s_mod, trusted((f, "moderate"), f, sub)):
            ids, behaviour = f_ids, f
    over = _normalised_over(s_mod, sub) if ids is None else None
    if over is not None:
        ids, axes_said = ("softmax-wrong-axis",), _axes_words(over, sub)
    if ids is None and _global(s_mod, sub):
        ids = ("softmax-global",)
    factor = None if ids is not None else _temperature(s_mod, sub)
    if factor is not None:  # the softmax of the input times a constant: a temperature inside
        ids, behaviour = ("softmax-temperature",), _times(factor)
    if ids is not None:
        unstable = False
        for i in big:
            got = student[i]
            if behaviour is not None:
                want = trusted((behaviour, "large", i), behaviour, [probes[i]])[0]
                unstable |= not matches([got], [want], vacuous=True) and (
                    not got.ok or not _finite(got.value) or behaviour is ref.softmax
                )
            else:
                unstable |= got.ok and not _finite(got.value)
        if unstable and behaviour is ref.softmax and _global_max(student, probes, big):
            ids = ("softmax-global-max",)  # one shift for the whole array, not per slice
        elif unstable and "softmax-unstable" not in ids:
            ids = (*ids, "softmax-unstable")
        if ids:
            found = s.in_function("softmax", ids, inline=False)
            if axes_said:
                return _said(found, "softmax-wrong-axis", axes_said)
            return found if factor is None else _factor_said(found, factor)

    def describe(got, want, probe):
        axis = probe.kwargs.get("axis", -1)
        parts = [array_diff(got, want), sums_text(got, axis)]
        parts += [t for t in properties.rows(got, axis) if "outside" in t]
        return "; ".join(p for p in parts if p)

    _, text = first_difference(student, expected, probes, describe)
    if all(not o.ok for o in student):
        return s.raised("softmax", student, probes)
    return s.plain("softmax", f"Your softmax differs from a softmax: {text}.")


def _times(c: float) -> Callable:
    def softmax_times(x, axis=-1):
        return ref.softmax(np.asarray(x, dtype=np.float64) * c, axis=axis)

    return softmax_times


def _temperature(student: list[Outcome], probes) -> float | None:
    """The one factor ``c`` (not 1) for which every result is ``softmax(c * x)`` along the
    probe's axis, read from the logs of the results (a least-squares fit per slice, the
    median over the probes) and checked on every probe; None where none fits."""
    fits = []
    for got, p in zip(student, probes, strict=True):
        a = as_array(got.value) if got.ok else None
        x = np.asarray(p.args[0], dtype=np.float64)
        if a is None or a.shape != x.shape or not np.isfinite(a).all() or (a <= 0).any():
            return None
        axis = p.kwargs.get("axis", -1)
        la = np.log(a.astype(np.float64))
        dl = la - la.mean(axis=axis, keepdims=True)
        dx = x - x.mean(axis=axis, keepdims=True)
        den = float(np.sum(dx * dx))
        if den > 1e-12:
            fits.append(float(np.sum(dl * dx)) / den)
    if not fits:
        return None
    c = float(np.median(fits))
    if not np.isfinite(c) or abs(c) < 1e-6 or abs(c - 1.0) < 1e-6:
        return None
    f = _times(c)
    return c if matches(student, run(f, probes)) else None


def _factor_words(c: float) -> str:
    known = (
        (math.log(2.0), "ln 2 = 0.693: 2**x in place of e**x"),
        (math.log(10.0), "ln 10 = 2.303: 10**x in place of e**x"),
        (1 / math.log(2.0), "log2(e) = 1.443"),
    )
    for value, words in known:
        if abs(c - value) <= 1e-6 * value:
            return f" On our inputs its results are the softmax of x times {words}."
    return f" On our inputs its results are the softmax of x times {c:.4g}, a factor fitted."


def _factor_said(found: Diagnosis, c: float) -> Diagnosis:
    return _said(found, "softmax-temperature", _factor_words(c))


def _said(found: Diagnosis, mid: str, words: str) -> Diagnosis:
    """``found`` with ``words`` (what was seen) told after ``mid``'s account of what it did."""
    did = CATALOGUE[mid].did
    message = found.message.replace(did, did + words, 1)
    roots = tuple((fn, message if t == found.message else t) for fn, t in found.roots)
    return named(found.misconceptions, found.blame, message, found.question, roots)


def _global_max(student: list[Outcome], probes, big: list[int]) -> bool:
    """On the large scores, the student's results are those of a softmax shifted by the whole
    array's maximum (nan exactly where a slice lies far below it)."""
    (f,) = mut.SOFTMAX["softmax-global-max"]
    return bool(big) and all(
        matches([student[i]], trusted((f, "large", i), f, [probes[i]])) for i in big
    )


def _finite(v) -> bool:
    a = as_array(v)
    return a is not None and bool(np.isfinite(a).all())


def _joint(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """A softmax over a set of axes together (every entry of each slice across them)."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def _axis_error(o: Outcome) -> bool:
    e = o.error
    return isinstance(e, errors.StudentRaised) and (e.numpy == "AxisError" or e.is_a(AxisError))


def _normalised_over(student: list[Outcome], probes) -> list[tuple[int, ...] | None] | None:
    """Per probe, the set of axes its result is a softmax over, jointly (one axis, or several
    together as ONNX's opset-12 coercion gives); None for a probe that raised NumPy's AxisError
    where the axes read on the others name one its array does not have. None where any result
    is no softmax over a set of axes, or no probe was normalised over other axes than asked."""
    found: list[tuple[int, ...] | None] = []
    for got, p in zip(student, probes, strict=True):
        x = p.args[0]
        if not got.ok:
            if not _axis_error(got):
                return None
            found.append(None)
            continue
        sets = [
            axes
            for k in range(1, x.ndim + 1)
            for axes in itertools.combinations(range(x.ndim), k)
            if same_array(got.value, _joint(x, axes))
        ]
        if not sets:
            return None
        found.append(sets[0])
    named_axes = [a for axes in found if axes is not None for a in axes]
    for axes, p in zip(found, probes, strict=True):
        if axes is None and not any(a >= p.args[0].ndim for a in named_axes):
            return None  # an AxisError no axis read elsewhere explains
    other = any(
        axes is not None and axes != (p.kwargs.get("axis", -1) % p.args[0].ndim,)
        for axes, p in zip(found, probes, strict=True)
    )
    return found if other else None


def _axes_words(found, probes) -> str:
    """What was asked and what it normalised over, on the probes where they differ."""
    seen = []
    for axes, p in zip(found, probes, strict=True):
        x = p.args[0]
        asked = p.kwargs.get("axis")
        ask = f"axis={asked}" if asked is not None else "the default axis"
        shape = f"an array of shape {tuple(x.shape)}"
        if axes is None:
            seen.append(f"asked for {ask} of {shape}, it raised NumPy's AxisError")
            continue
        if axes == ((-1 if asked is None else asked) % x.ndim,):
            continue
        over = f"axis {axes[0]}" if len(axes) == 1 else "axes " + ", ".join(map(str, axes))
        over += " together" if len(axes) > 1 else ""
        seen.append(f"asked for {ask} of {shape}, it normalised over {over}")
    return " On our inputs: " + "; ".join(seen) + "." if seen else ""


def _global(student: list[Outcome], probes) -> bool:
    """Every result is non-negative and sums to 1 over the whole array (not along the axis)."""
    for got, p in zip(student, probes, strict=True):
        a = as_array(got.value) if got.ok else None
        if a is None or a.shape != p.args[0].shape or not np.isfinite(a).all():
            return False
        if (a < -1e-12).any() or not np.isclose(a.sum(), 1.0, atol=1e-6):
            return False
    return True
