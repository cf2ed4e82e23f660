"""Name the misconception behind a wrong answer, and the function it lives in (docs/contract.md §6).

``DiagnosisSession`` (session.py) holds one submission's calls, budget and blame; each question
has its own small module in ``questions/``; ``attach.explain_failures`` puts a diagnosis on the
failing cases of a question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .attach import explain_failures
from .catalogue import CATALOGUE, CONTRACT_IDS, Misconception
from .result import Diagnosis
from .session import DiagnosisSession

__all__ = [
    "CATALOGUE",
    "CONTRACT_IDS",
    "Diagnosis",
    "DiagnosisSession",
    "Misconception",
    "diagnose",
    "diagnose_all",
    "explain_failures",
]


def diagnose(qid: str, env: Mapping[str, Callable]) -> Diagnosis | None:
    """Diagnose question ``qid`` given the student's functions (proxy semantics).

    Returns None when the function agrees with the reference on every probe, is not attempted,
    or hangs or crashes (the failing hidden test's own message then says all there is to say).
    """
    return DiagnosisSession(env).diagnose(qid)


def diagnose_all(qids: Iterable[str], env: Mapping[str, Callable]) -> dict[str, Diagnosis | None]:
    """Diagnose several questions of one submission, sharing the calls into its code."""
    session = DiagnosisSession(env)
    return {q: session.diagnose(q) for q in qids}
