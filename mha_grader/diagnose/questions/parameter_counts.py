"""parameter_counts: a catalogued mistake (biases left out), else what the counts got wrong;
and the ValueError for a head count that does not divide d_model."""

from __future__ import annotations

import itertools
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
    refusals = pr.count_refusal_probes()
    found = add_missing_refusal(s, qid, probes, refusals, found, "counts-no-valueerror")
    return _add_unnamed(s, qid, refusals, found)


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
