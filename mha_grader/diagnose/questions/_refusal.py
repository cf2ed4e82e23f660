"""The contract's "must raise ValueError" inputs (the ``*_refusal_probes``): a function that
returns a result there, or raises another exception, misses its check (``*-no-valueerror``);
one that raises another exception there is told which, not that it has no check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import StudentRaised
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
    other = _other_exception(s.student(qid, refusals))
    if other is not None:  # it refuses, with another exception: said as it is
        missing = (
            f"Your {qid} raises {other} on these inputs, where the contract asks for a "
            "ValueError. ValueError is the exception for an argument with a bad value: callers "
            "catch it by that name, and another exception (an assert's AssertionError, a "
            "framework's own class) slips past them. Hint: raise ValueError there (or derive "
            "your own exception class from ValueError)."
        )
        if found is None:
            return named((mid,), qid, missing, qid)
    if found is None:
        return s.in_function(qid, (mid,), inline=False)
    if found.blame == qid:
        return named((*found.misconceptions, mid), qid, f"{found.message} {missing}", qid)
    # right given wrong callees, and a check of its own missing
    text = f"{missing} Besides: {found.message}"
    return named((mid, *found.misconceptions), qid, text, qid)


def _other_exception(outcomes) -> str | None:
    """What the student raised on every refusal probe, said as it may be shown ("Python's
    AssertionError", "ConfigurationError (an exception class of your own)"), where it raised
    one kind of exception on all of them and none is a ValueError; else None."""
    kinds = set()
    for o in outcomes:
        e = o.error
        if not isinstance(e, StudentRaised) or e.is_a(ValueError):
            return None
        kinds.add(e.kind)
    return kinds.pop() if len(kinds) == 1 else None
