"""parameter_counts: a catalogued mistake (biases left out), else what the counts got wrong;
and the ValueError for a head count that does not divide d_model."""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from ...errors import mentions
from .. import mutants as mut
from .. import probes as pr
from .. import properties
from ..catalogue import CATALOGUE
from ..compare import matches
from ..explain import first_difference
from ..result import Diagnosis, named
from ..trusted import trusted
from ._refusal import add_missing_refusal

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "parameter_counts"
    probes = pr.count_probes()
    found = _values(s, qid, probes)
    if found is None and _iterates_twice(s, qid):
        found = s.in_function(qid, ("counts-iterates-twice",), inline=False)
    refusals = pr.count_refusal_probes()
    found = add_missing_refusal(s, qid, probes, refusals, found, "counts-no-valueerror")
    return _add_unnamed(s, qid, refusals, found)


def _iterates_twice(s: DiagnosisSession, qid: str) -> bool:
    """Right on lists, but head counts given as a generator get an empty or partial dict, every
    count in it right: the generator was used up by an earlier pass over it."""
    (probe,) = pr.count_generator_probes()
    (got,) = s.student(qid, (probe,))
    d_model, heads = probe.args
    want = ref.parameter_counts(d_model, list(heads), **probe.kwargs)
    if not got.ok or not isinstance(got.value, dict) or len(got.value) >= len(want):
        return False
    return all(h in want and got.value[h] == want[h] for h in got.value)


def _add_unnamed(s: DiagnosisSession, qid: str, refusals, found: Diagnosis | None):
    """``found``, with counts-valueerror-unnamed added when every refusal probe gets a
    ValueError but some message names no head count that does not divide d_model (the
    contract asks for one). Only beside right values or a catalogued mistake, as a missing
    refusal is."""
    if found is not None and not found.misconceptions:
        return found
    if found is not None and "counts-no-valueerror" in found.misconceptions:
        return found
    if s.raises_value_error(qid, refusals) is not True:
        return found
    for probe, o in zip(refusals, s.student(qid, refusals), strict=True):
        d_model, heads = probe.args
        bad = [str(h) for h in heads if d_model % h]
        message = getattr(o.error, "message", str(o.error))
        if not any(mentions(message, h) for h in bad):
            break
    else:
        return found
    mid = "counts-valueerror-unnamed"
    if found is None:
        return s.in_function(qid, (mid,), inline=False)
    text = f"{found.message} {CATALOGUE[mid].message}"
    return named((*found.misconceptions, mid), qid, text, qid)


def _values(s: DiagnosisSession, qid: str, probes) -> Diagnosis | None:
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), ref.parameter_counts, probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    for mid, fs in mut.COUNTS.items():
        if any(matches(student, trusted((f,), f, probes)) for f in fs):
            return s.in_function(qid, (mid,), inline=False)
    seen = _by_behaviour(student, expected, probes)
    if seen is None:  # a difference by a simple formula, over more shapes than the probes'
        seen = _extra_terms(s, qid, student, expected, probes)
    if seen is not None:  # the classes beyond their examples: what the counts were seen to do
        mid, words = seen
        found = s.in_function(qid, (mid,), inline=False)
        head, hint, tail = found.message.partition(" Hint: ")
        return named(found.misconceptions, qid, f"{head} {words}{hint}{tail}", qid)

    def describe(got, want, probe):
        if not isinstance(got, dict) or set(got) != set(want):
            return "did not return a dict keyed by the head counts asked for"
        if all(got[h] == want[h] for h in want):
            return ""
        d_model, heads = probe.args
        if probe.kwargs.get("bias"):
            without = ref.parameter_counts(d_model, heads, bias=False)
            found = properties.counts(got, want, without, d_model)
            if found:
                return "; ".join(found)
        values = set(got.values())
        if len(values) > 1:
            return (
                "gives different counts for different numbers of heads, yet splitting "
                "into heads adds no parameters"
            )
        bias = "with" if probe.kwargs.get("bias") else "without"
        return (
            f"gives a count that differs from what the torch module has: for d_model = "
            f"{d_model} {bias} biases, nn.MultiheadAttention has {want[heads[0]]} parameters "
            "whatever the number of heads"
        )

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your parameter_counts {text}.")


def _counts_of(o) -> dict[int, int] | None:
    """An outcome's counts as ints by head count, or None (raised, not a dict of integers)."""
    if not o.ok or not isinstance(o.value, dict):
        return None
    if not all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v in o.value.values()
    ):
        return None
    return {h: int(v) for h, v in o.value.items()}


def _by_behaviour(student, expected, probes) -> tuple[str, str] | None:
    """A count mistake no mutant reproduces, read from how the counts behave: they change with
    the number of heads (counts-wide-heads when they grow, counts-vary-with-heads otherwise),
    or bias=False still counts some d_model-wide biases while bias=True is right
    (counts-bias-when-false). With the words of what was seen."""
    got = [_counts_of(o) for o in student]
    if any(g is None or set(g) != set(e.value) for g, e in zip(got, expected, strict=True)):
        return None
    for g, e, p in zip(got, expected, probes, strict=True):
        heads = sorted(g)
        values = [g[h] for h in heads]
        if len(set(values)) < 2:
            continue
        d_model = p.args[0]
        bias = "with" if p.kwargs.get("bias") else "without"
        seen = ", ".join(f"{h} head{'s' if h != 1 else ''}: {g[h]}" for h in heads)
        words = (
            f"Here, for d_model = {d_model} {bias} biases, it gives {seen}; torch's module "
            f"has {e.value[heads[0]]} for every head count."
        )
        steps = [b - a for a, b in itertools.pairwise(values)]
        if all(x >= 0 for x in steps):  # grows: projections per head, rows d_model wide
            if any(x % d_model for x in steps):
                return None
            return "counts-wide-heads", words
        return "counts-vary-with-heads", words
    extra = []
    for g, e, p in zip(got, expected, probes, strict=True):
        d_model, right = p.args[0], e.value
        if p.kwargs.get("bias"):
            if g != right:
                return None
            continue
        k = {(g[h] - right[h]) / d_model for h in g}
        if len(k) != 1 or next(iter(k)) not in (1, 2, 3, 4):
            return None
        extra.append((d_model, int(next(iter(k)))))
    if not extra or len({k for _, k in extra}) != 1 or len(extra) == len(probes):
        return None
    d_model, k = extra[0]
    which = (
        "one projection's bias (the output projection's, as ViT's)"
        if k == 1
        else f"the biases of {k} of the four projections"
    )
    words = (
        f"Here, with bias=False, it counts {k} * d_model more than the module has ({k * d_model} "
        f"for d_model = {d_model}: {which}), and is right with bias=True."
    )
    return "counts-bias-when-false", words


def _extra_probes() -> tuple[pr.Probe, ...]:
    """More widths and head counts, with and without biases: enough to tell a difference in
    d_model^2, d_model, the head count and a constant apart."""
    return (
        pr.Probe((16, [1, 2, 4, 8, 16])),
        pr.Probe((6, [1, 2, 3, 6])),
        pr.Probe((16, [1, 4, 16]), {"bias": True}),
        pr.Probe((6, [1, 2, 3, 6]), {"bias": True}),
    )


# The terms a difference is fitted in: (name, value for d_model and h).
_TERMS = (
    ("d_model^2", lambda d, h: d * d),
    ("d_model", lambda d, h: d),
    ("h", lambda d, h: h),
    ("1", lambda d, h: 1),
)


def _formula(coef, terms=_TERMS) -> str:
    parts = []
    order = sorted(range(len(coef)), key=lambda i: coef[i] < 0)  # the positive terms first
    for k, (name, _) in ((coef[i], terms[i]) for i in order):
        if k == 0:
            continue
        mag = abs(k)
        term = str(mag) if name == "1" else (name if mag == 1 else f"{mag} * {name}")
        parts.append(("- " if k < 0 else "+ ") + term)
    if not parts:
        return "0"
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[1:]


def _reading(coef, bias: bool) -> list[str]:
    """What a difference of these terms would come from, where a common layer explains it."""
    a2, a, b, c = coef
    said = []
    n = {1: "one", 2: "two", 3: "three", 4: "four"}
    times = "d_model" if abs(a) == 1 else f"{abs(a)} * d_model"
    if a == 2 and not bias:
        said.append("2 * d_model more, as a LayerNorm's weight and bias would add")
    elif a > 0:
        said.append(f"{times} more: {n.get(a, a)} more d_model-wide vector{'s' if a != 1 else ''}")
    elif a < 0 and bias and -a <= 4:
        said.append(f"{times} fewer: {n[-a]} of the four biases left out")
    elif a < 0:
        said.append(f"{times} fewer")
    if b > 0:
        said.append(
            f"{n.get(b, b)} more per head, as a parameter of every head's own (Swin V2's "
            "logit_scale, one per head) would add"
        )
    elif b < 0:
        said.append(f"{-b} fewer per head")
    if a2:
        said.append(f"{a2} * d_model^2: {'more' if a2 > 0 else 'fewer'} d_model x d_model matrices")
    if c:
        said.append(f"{c} as a constant")
    return said


def _extra_terms(s: DiagnosisSession, qid: str, student, expected, probes):
    """counts-extra-terms: the student's counts minus the module's fit, with and without
    biases each, a simple formula in d_model^2, d_model, the head count and a constant
    (integers), over the probes and more shapes, not zero everywhere. With the difference
    found and what it would come from."""
    extra = _extra_probes()
    every = (*probes, *extra)
    got = [_counts_of(o) for o in (*student, *s.student(qid, extra))]
    want = [*expected, *trusted(("ref", qid, "extra"), ref.parameter_counts, extra)]
    fits = {}
    for bias in (False, True):
        rows, diffs = [], []
        for g, e, p in zip(got, want, every, strict=True):
            if bool(p.kwargs.get("bias")) != bias:
                continue
            if g is None or set(g) != set(e.value):
                return None
            d_model = p.args[0]
            for h in g:
                rows.append([f(d_model, h) for _, f in _TERMS])
                diffs.append(g[h] - e.value[h])
        A, y = np.array(rows, dtype=float), np.array(diffs, dtype=float)
        coef = np.round(np.linalg.lstsq(A, y, rcond=None)[0]).astype(int)
        if not np.array_equal(A @ coef, y):
            return _other_layer(s, qid, got, want, every)
        fits[bias] = tuple(int(k) for k in coef)
    if not any(any(c) for c in fits.values()):
        return None
    off, on = fits[False], fits[True]
    if off == on:
        words = (
            f"Here your counts are the module's {_plus(off)}, with bias=False and with bias=True"
        )
    else:
        words = (
            f"Here your counts are the module's {_plus(off)} with bias=False and "
            f"{_plus(on)} with bias=True"
        )
    delta = tuple(b - a for a, b in zip(off, on, strict=True))
    said = _reading(off, False) + [f"with bias=True also {r}" for r in _reading(delta, True)]
    words += " (the difference fitted over several d_model and head counts)"
    words += f": {'; '.join(said)}." if said else "."
    return "counts-extra-terms", words


def _plus(coef) -> str:
    f = _formula(coef)
    if f == "0":
        return "exactly"
    if sum(1 for k in coef if k) == 1:
        return f"minus {f[1:]}" if f.startswith("-") else f"plus {f}"
    return f"plus ({f})"


def _eighths(A: np.ndarray, y: np.ndarray) -> tuple[Fraction, ...] | None:
    """Coefficients in eighths that give ``y`` exactly from ``A``'s columns, or None."""
    coef = np.round(np.linalg.lstsq(A, y, rcond=None)[0] * 8) / 8
    if not np.allclose(A @ coef, y, rtol=0, atol=1e-6):
        return None
    return tuple(Fraction(float(k)).limit_denominator(8) for k in coef)


def _other_layer(s: DiagnosisSession, qid: str, got, want, every) -> tuple[str, str] | None:
    """counts-extra-terms for counts of a layer other than torch's: counts that do not change
    with the head count but differ from the module's on every shape, the difference fitted in
    more terms (eighths of d_model^2, d_model, d_model^2 / h, ...) on the widths where one
    fits, and the counts told beside the module's."""
    if any(g is None or set(g) != set(e.value) for g, e in zip(got, want, strict=True)):
        return None
    seen: dict[tuple[int, bool], tuple[int, int]] = {}
    for g, e, p in zip(got, want, every, strict=True):
        if len(set(g.values())) != 1:
            return None
        key = (p.args[0], bool(p.kwargs.get("bias")))
        mine, torch_s = next(iter(g.values())), e.value[next(iter(g))]
        if mine <= 0 or seen.get(key, (mine, torch_s)) != (mine, torch_s):
            return None
        seen[key] = (mine, torch_s)
    if any(mine == torch_s for mine, torch_s in seen.values()):
        return None
    fitted = []
    for bias in (False, True):
        shapes = sorted(k for k in seen if k[1] == bias)
        if len(shapes) < 2:
            continue
        rows = [[f(d, 1) for _, f in _TERMS[:2]] for d, _ in shapes]
        y = [seen[k][0] - seen[k][1] for k in shapes]
        coef = _eighths(np.array(rows, dtype=float), np.array(y, dtype=float))
        if coef is not None and len(shapes) > 2:
            fitted.append(f"{_formula(coef)} {'with' if bias else 'without'} biases")
    told = "; ".join(
        f"d_model = {d} {'with' if b else 'without'} biases: {m} (torch's module {t})"
        for (d, b), (m, t) in sorted(seen.items())
    )
    words = (
        "Here your counts are the same for every head count but those of a layer other than "
        f"torch's, on every shape we tried: {told}"
    )
    words += f"; the difference is {', and '.join(fitted)}." if fitted else "."
    return "counts-extra-terms", words
