"""Attach a diagnosis to the failing hidden-test results of a code question (for the engine)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping

from ..questions import CODE_QUESTIONS
from ..results import DIAGNOSIS_PREFIX as PREFIX
from ..results import TestResult
from .core import Diagnoser

log = logging.getLogger(__name__)

# One Diagnoser per submission env, so questions share the calls into the same code. Keyed by
# id(env); the entry keeps env alive, so the id cannot be reused while it is cached.
_diagnosers: OrderedDict[int, tuple[Mapping, Diagnoser]] = OrderedDict()
_lock = threading.Lock()


def _diagnoser(env: Mapping[str, Callable]) -> Diagnoser:
    with _lock:
        entry = _diagnosers.get(id(env))
        if entry is None or entry[0] is not env:
            entry = (env, Diagnoser(env))
            _diagnosers[id(env)] = entry
            while len(_diagnosers) > 32:
                _diagnosers.popitem(last=False)
        return entry[1]


def explain_failures(
    qid: str, results: list[TestResult], env: Mapping[str, Callable]
) -> list[TestResult]:
    """Add ``misconception:<id>`` tags and the diagnosis to the failing cases of ``qid``.

    Never raises: a failure of the diagnosis itself is logged and the results stay as they were.
    """
    if qid not in CODE_QUESTIONS or all(r.passed for r in results):
        return results
    try:
        d = _diagnoser(env).diagnose(qid)
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
