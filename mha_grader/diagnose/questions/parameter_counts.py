"""parameter_counts: a catalogued mistake (biases left out), else what the counts got wrong;
and the ValueError for a head count that does not divide d_model."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
