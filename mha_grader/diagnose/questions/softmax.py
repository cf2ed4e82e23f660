"""softmax: a catalogued mistake (axis, stability, keepdims, global), else what is off."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

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
    if matches(s_mod, [expected[i] for i in mod]):
        ids, behaviour = (), ref.softmax
    # the mutants that differ from a softmax already on moderate scores
    concrete = [((i,), f) for i, fs in mut.SOFTMAX.items() if i not in mut.LARGE_ONLY for f in fs]
    concrete += [(i, f) for i, fs in mut.SOFTMAX_COMBINED.items() for f in fs]
    for f_ids, f in concrete:
        if ids is None and matches(s_mod, trusted((f, "moderate"), f, sub)):
            ids, behaviour = f_ids, f
    if ids is None and _over_other_axes(s_mod, sub):
        ids = ("softmax-wrong-axis",)
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
    did = CATALOGUE["softmax-temperature"].did
    message = found.message.replace(did, did + _factor_words(c), 1)
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


def _over_other_axes(student: list[Outcome], probes) -> bool:
    """Every result is a softmax over some axis, and at least one over the wrong axis."""
    other = False
    for got, p in zip(student, probes, strict=True):
        if not got.ok:
            return False
        x = p.args[0]
        axis = p.kwargs.get("axis", -1) % x.ndim
        axes = [a for a in range(x.ndim) if same_array(got.value, ref.softmax(x, axis=a))]
        if not axes:
            return False
        other |= axis not in axes
    return other


def _global(student: list[Outcome], probes) -> bool:
    """Every result is non-negative and sums to 1 over the whole array (not along the axis)."""
    for got, p in zip(student, probes, strict=True):
        a = as_array(got.value) if got.ok else None
        if a is None or a.shape != p.args[0].shape or not np.isfinite(a).all():
            return False
        if (a < -1e-12).any() or not np.isclose(a.sum(), 1.0, atol=1e-6):
            return False
    return True
