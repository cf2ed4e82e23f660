"""A composite question waits on a callee that fails its own checks, instead of failing.

mha-check has no reference, so when ``attention`` fails its checks while ``softmax`` fails its
own, it cannot tell whether attention is wrong or only the softmax it calls: grading carries the
callee's error forward and may give attention full marks. The check must never contradict the
grade, so it says which callee to fix first, and no hint of its own that might not apply.

Only a callee the composite really called in its failing checks counts (``calls.py``): a
composite that computes attention inline fails on its own, as grading charges it. A composite
that returned a result of another form than its contract's in a failing check, while every
callee call there returned its contract's form (``forms.py``), made that mistake itself: it fails
(a loop over heads that returns its last head's weights waits on nothing). So does a composite
with a failing check in which it called none of the failing callees (a cross_check that raises
before it calls multi_head_attention): nothing there was handed to it. (Whether the callee
was wrong *on the inputs it was given* only grading can tell, with the reference.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection

from .questions import CALLEES
from .results import QuestionResult, Status

BLOCKING = (Status.FAILED, Status.WAITING, Status.NOT_ATTEMPTED, Status.UNAVAILABLE)


def apply(
    results: list[QuestionResult],
    result_of: Callable[[str], QuestionResult],
    beside: Callable[[str, str], QuestionResult | None] | None = None,
) -> list[QuestionResult]:
    """``results`` with each failed composite question turned to WAITING where a callee fails
    its own checks or waits in turn (``result_of`` runs a callee's checks, once, when it was
    not selected). ``beside(caller, callee)``: the callee's checks as the caller's file sees
    it, where that differs (a NumPy question called from crosscheck.py, which may rebind what
    it calls, as in grading's torch worker), else None."""
    settled: dict[str, QuestionResult] = {}
    rebound: set[str] = set()  # callees that fail only as crosscheck.py leaves them

    def blocks(caller: str, callee: str) -> bool:
        if settle(result_of(callee)).status in BLOCKING:
            return True
        seen = beside(caller, callee) if beside is not None else None
        if seen is not None and seen.status in BLOCKING:
            rebound.add(callee)
            return True
        return False

    def settle(r: QuestionResult) -> QuestionResult:
        if r.qid not in settled:
            blocking = []
            if r.status is Status.FAILED and r.qid in CALLEES and not r.own_form:
                blocking = [c for c in CALLEES[r.qid] if c in r.called and blocks(r.qid, c)]
            if not blocking:
                settled[r.qid] = r
            elif (alone := _alone(r, blocking)) is not None:
                settled[r.qid] = _own_failure(r, blocking, alone)
            else:
                settled[r.qid] = _waiting(r, blocking, settled, rebound)
        return settled[r.qid]

    return [settle(r) for r in results]


def _alone(r: QuestionResult, blocking: list[str]) -> str | None:
    """The first failing check of ``r`` that called none of the ``blocking`` callees: what
    fails there is the composite's own doing (None: every failing check called one)."""
    for names, check in r.failing_calls:
        if not names & set(blocking):
            return check
    return None


def _own_failure(r: QuestionResult, blocking: list[str], check: str) -> QuestionResult:
    """A composite with a failing check of its own: it fails, whatever its callees do."""
    listed = " or ".join(blocking)
    message = (
        f"{check} (This check fails without calling your {listed}: the mistake is in "
        f"{r.qid}'s own code. {listed} {'fails' if len(blocking) == 1 else 'fail'} its own "
        f"checks too; fix {'it' if len(blocking) == 1 else 'them'} as well.)"
    )
    return dataclasses.replace(r, status=Status.FAILED, message=message)


def _waiting(
    r: QuestionResult,
    callees: list[str],
    settled: dict[str, QuestionResult],
    rebound: Collection[str] = (),
) -> QuestionResult:
    states = [
        f"{c} is "
        + (
            "failing its checks once crosscheck.py has run (it rebinds something it calls)"
            if c in rebound
            else _state(settled[c])
        )
        for c in callees
    ]
    first = callees[0]
    while settled[first].status is Status.WAITING:  # the root of a chain of waits
        first = settled[first].waiting_on[0]
    message = (
        f"{r.qid} calls {' and '.join(callees)}, and {' and '.join(states)}: its checks cannot "
        f"tell a mistake of its own from one it was handed. Fix {first} first, then check "
        f"{r.qid} again ({r.total - r.passed} of its {r.total} checks fail for now)."
    )
    return QuestionResult(
        r.qid,
        Status.WAITING,
        message,
        passed=r.passed,
        total=r.total,
        output=r.output,
        waiting_on=tuple(callees),
    )


def _state(r: QuestionResult) -> str:
    if r.status is Status.WAITING:
        return f"itself waiting on {', '.join(r.waiting_on)}"
    if r.status is Status.NOT_ATTEMPTED:
        return "not written yet"
    if r.status is Status.UNAVAILABLE:
        return "not checked (see above)"
    return "failing its own checks"
