"""What a reviewer goes through: every flagged, failed or reopened question of a graded class
(or any question asked for), worst first."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from mha_check.questions import QUESTION_IDS, WRITTEN_QUESTIONS

from ..outcomes import GRADER_FAILED_REASON, Status, TestResult
from ..outputs import reports
from ..outputs.folder import OutputFolder, as_folder
from ..points import POINTS
from .apply import read_sealed
from .decisions import Decision, Reviews, holds, load


class Kind(StrEnum):
    """Why an item is in the queue, worst first (the ``kind`` column of ``review --list``)."""

    GRADER_ERROR = Status.GRADER_ERROR.value  # the grader itself failed on the question
    CHANGED = "changed"  # the answer changed since a person decided it
    FLAGGED = "flagged"  # the grader asks for a person
    REQUESTED = "requested"  # asked for by name (a regrade request), not flagged
    DECIDED = "decided"


GRADER_ERROR, CHANGED, FLAGGED, REQUESTED, DECIDED = Kind
_RANK = {kind: rank for rank, kind in enumerate(Kind)}


@dataclass
class Item:
    """One student's question, as a reviewer sees it."""

    student: str
    question: str
    kind: Kind
    cases: list[TestResult]  # the grader's results, as graded
    answer: str | None  # the visible written answer (written questions)
    source: str  # where the submission was read from
    decision: Decision | None = None
    previous: Decision | None = None  # a decision dropped since the answer changed

    @property
    def key(self) -> str:
        return f"{self.student}/{self.question}"

    @property
    def grader_score(self) -> float:
        return round(sum(r.score for r in self.cases), 4)

    @property
    def max_score(self) -> float:
        return POINTS[self.question]

    @property
    def open(self) -> bool:
        return self.decision is None

    def reason(self) -> str:
        """Why it is (or was) in the queue, in one line."""
        if self.kind == CHANGED and self.previous is not None:
            return (
                f"changed since {self.previous.reviewer or 'a person'} gave "
                f"{reports.points(self.previous.score)} on {self.previous.decided:%Y-%m-%d}"
            )
        if any(r.grader_failed for r in self.cases):
            return GRADER_FAILED_REASON
        for r in self.cases:
            if r.needs_review:
                reason = r.review_reason.strip()
                if reason:
                    first = re.split(r"(?<=[.!?])\s", reason, maxsplit=1)[0]
                    return first if len(first) <= 120 else first[:119] + "…"
                return "flagged by the grader"
        return "asked for (not flagged by the grader)"


def order_key(item: Item) -> tuple:
    """Worst first: the grader's failures, answers changed since a decision, flagged answers,
    then questions asked for; within each, the lowest share of the question's points first,
    then the questions worth most."""
    share = item.grader_score / item.max_score if item.max_score else 0.0
    return (
        _RANK[item.kind],
        round(share, 4),
        -item.max_score,
        item.student,
        QUESTION_IDS.index(item.question),
    )


def _kind(cases: list[TestResult]) -> str | None:
    if any(r.grader_failed for r in cases):
        return GRADER_ERROR
    if any(r.needs_review for r in cases):
        return FLAGGED
    return None


def items(
    out: OutputFolder | str | Path,
    reviews: Reviews | None = None,
    students: Iterable[str] | None = None,
    questions: Iterable[str] | None = None,
    decided: bool = False,
) -> list[Item]:
    """The items of a graded class, worst first: every flagged or reopened question (and, with
    ``decided``, every decided one). ``students``/``questions`` ask for those students'
    questions whether flagged or not (a regrade request)."""
    out = as_folder(out)
    reviews = load(out) if reviews is None else reviews
    asked = students is not None or questions is not None
    wanted_students = set(students) if students is not None else None
    wanted_questions = set(questions) if questions is not None else None
    found: list[Item] = []
    on_sheet = {r.get("student") for r in out.read_grades()}
    for student in out.sealed_students():
        if wanted_students is not None and student not in wanted_students:
            continue
        if on_sheet and student not in on_sheet:  # no longer in the class
            continue
        sealed = read_sealed(out, student)
        if sealed is None:
            continue
        decisions, reopened = reviews.of(student)
        for q in QUESTION_IDS:
            if wanted_questions is not None and q not in wanted_questions:
                continue
            cases = [r for r in sealed.grade.results if r.question == q]
            decision = decisions.get(q)
            previous = reopened[q].previous if q in reopened else None
            if decision is not None and not holds(decision.judged, sealed.hashes, q):
                decision, previous = None, decision  # changed since: dropped at the next settle
            kind = CHANGED if previous is not None else _kind(cases)
            if decision is not None:
                if not (decided or asked):
                    continue
                kind = DECIDED
            elif kind is None:
                if not asked:
                    continue
                kind = REQUESTED
            found.append(
                Item(
                    student,
                    q,
                    kind,
                    cases,
                    sealed.answers.get(q) if q in WRITTEN_QUESTIONS else None,
                    sealed.source,
                    decision,
                    previous,
                )
            )
    return sorted(found, key=order_key)
