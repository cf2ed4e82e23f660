"""The contract's "must raise ValueError" inputs (the ``*_refusal_probes``): a function that
returns a result there, or raises another exception, misses its check (``*-no-valueerror``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..catalogue import CATALOGUE
from ..result import Diagnosis, named

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def add_missing_refusal(
    s: DiagnosisSession, qid: str, probes, refusals, found: Diagnosis | None, mid: str
) -> Diagnosis | None:
    """``found`` (the diagnosis of ``qid``'s values), with ``mid`` added when ``qid`` raises no
    ValueError on some refusal probe. Only beside right values or a catalogued mistake: where
    the values are wrong in a way we cannot name, that is what the student must hear about."""
    s.value_memo[qid] = found
    if found is not None and not found.misconceptions:
        return found
    values = s.student(qid, probes)
    if s.not_attempted(values) or not any(o.ok for o in values):
        return found
    if s.raises_value_error(qid, refusals) is not False:
        return found
    missing = CATALOGUE[mid].message
    if found is None:
        return s.in_function(qid, (mid,), inline=False)
    if found.blame == qid:
        return named((*found.misconceptions, mid), qid, f"{found.message} {missing}", qid)
    # right given wrong callees, and a check of its own missing
    text = f"{missing} Besides: {found.message}"
    return named((mid, *found.misconceptions), qid, text, qid)
