"""Attach a diagnosis to the failing hidden-test results of a code question (for the engine)."""

from __future__ import annotations

import logging

from mha_check.questions import CODE_QUESTIONS

from ..outcomes import DIAGNOSIS_PREFIX as PREFIX
from ..outcomes import TestResult
from .session import DiagnosisSession

log = logging.getLogger(__name__)


def explain_failures(
    qid: str, results: list[TestResult], session: DiagnosisSession
) -> list[TestResult]:
    """Add ``misconception:<id>`` tags and the diagnosis to the failing cases of ``qid``.

    ``session`` is the submission's (the engine makes one per submission, so that questions
    share the calls into the same code). Never raises: a failure of the diagnosis itself is
    logged and the results stay as they were.
    """
    if qid not in CODE_QUESTIONS or all(r.passed or r.not_attempted for r in results):
        return results  # nothing to diagnose (a function not written yet is told so already)
    try:
        d = session.diagnose(qid)
    except Exception:
        log.exception("diagnosing %s failed", qid)
        return results
    if d is None:
        return results
    for r in results:
        if not r.passed:
            r.tags += [t for t in d.tags if t not in r.tags]
            r.output = f"{r.output}\n{PREFIX}{d.message}" if r.output else PREFIX + d.message
    return results
