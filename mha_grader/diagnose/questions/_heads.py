"""split_heads and merge_heads: the same shape of diagnosis (a catalogued reshaping mistake,
else what is off)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import properties
from ..compare import matches
from ..explain import array_diff, first_difference
from ..result import Diagnosis
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose_reshaping(
    s: DiagnosisSession,
    qid: str,
    probes,
    reference: Callable,
    catalogue: dict[str, list[Callable]],
    names: tuple[str, ...],
) -> Diagnosis | None:
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), reference, probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    for mid, fs in catalogue.items():
        if any(matches(student, trusted((f,), f, probes)) for f in fs):
            return s.in_function(qid, (mid,), inline=False)
    if all(not o.ok for o in student):
        return s.raised(qid, student, probes)

    def describe(got, want, probe):
        text = array_diff(got, want, names)
        moved = properties.transposed(got, want)
        return f"{text}; {moved}" if moved else text

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your {qid} differs from the reference: {text}.")
