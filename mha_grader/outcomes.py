"""The grader's one vocabulary: how a submission ended (``Status``), what a test result is marked
with (``Tag``), and the result records every room shares (``TestResult``, ``Grade``).

Statuses and tags are written into the reports (docs/contract.md §5), so their words are fixed
here once; what a result *is* (a grader failure, a case carried forward, why it wants a person)
is kept as data on it, never recovered later by reading the text a student is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from mha_check.questions import QUESTION_IDS

from .points import MAX_TOTAL, POINTS


class Status(StrEnum):
    """One word per submission (docs/contract.md §5), in the order they take precedence."""

    GRADER_ERROR = "grader-error"  # the grader itself failed: never counted against the student
    REFUSED = "refused"  # not readable as a submission: nothing graded
    MISSING_FILES = "missing-files"
    UNREADABLE_FILES = "unreadable-files"
    PROTOCOL_ERROR = "protocol-error"  # the student's code wrote to the grader's channel
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    IMPORT_ERROR = "import-error"
    OK = "ok"


class Tag:
    """The tags a test result carries in results.json (docs/contract.md §5)."""

    NEEDS_REVIEW = "needs-review"  # a person should look at this question
    REVIEWED = "reviewed"  # a person decided this question's score
    REOPENED = "review-reopened"  # a decision dropped because the answer changed since
    GRADER_ERROR = "grader-error"  # Gradescope: every question of a grading that failed
    MISCONCEPTION = "misconception:"  # + a docs/contract.md §6 id
    CARRIED = "carried-forward:"  # + the callee whose mistake was not charged again

    @staticmethod
    def misconception(mid: str) -> str:
        return Tag.MISCONCEPTION + mid

    @staticmethod
    def misconceptions(tags: Iterable[str]) -> list[str]:
        """The §6 ids among ``tags``, in order."""
        return [t.removeprefix(Tag.MISCONCEPTION) for t in tags if t.startswith(Tag.MISCONCEPTION)]


DIAGNOSIS_PREFIX = "Diagnosis: "  # starts the line a diagnosis adds to a failing case's output
GRADER_FAILED = (
    "the grader itself failed on this question (not your code's fault); "
    "your instructor has been told and will grade it by hand"
)
GRADER_FAILED_REASON = "the grader itself failed on this question"


@dataclass
class TestResult:
    """One graded test case, as it appears in Gradescope's results.json ``tests`` list."""

    name: str  # always starts with the question id, e.g. "softmax: rows sum to 1"
    question: str  # question id (docs/contract.md §2)
    score: float
    max_score: float
    output: str = ""  # for the student: teaches, never shows hidden inputs or expected values
    visibility: str = "visible"  # Gradescope: visible, hidden, after_due_date, after_published
    tags: list[str] = field(default_factory=list)  # Tag.*: "misconception:<id>", "needs-review"
    # For the grader and the people who run it, never shown as such:
    grader_failed: bool = False  # the grader itself failed here (the student is not charged)
    review_reason: str = ""  # why a person should look (set with Tag.NEEDS_REVIEW)
    not_attempted: bool = False  # failed because the function still raises NotImplementedError

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score

    @property
    def needs_review(self) -> bool:
        return Tag.NEEDS_REVIEW in self.tags

    def flag(self, reason: str) -> None:
        """Ask a person to look at this result, and say why (the latest reason wins)."""
        if Tag.NEEDS_REVIEW not in self.tags:
            self.tags.append(Tag.NEEDS_REVIEW)
        self.review_reason = reason

    @classmethod
    def grader_failure(cls, qid: str) -> TestResult:
        """A question the grader could not grade: 0 points, flagged, never the student's fault."""
        result = cls(f"{qid}: not graded", qid, 0.0, POINTS[qid], GRADER_FAILED, grader_failed=True)
        result.flag(GRADER_FAILED_REASON)
        return result


@dataclass
class Grade:
    """Everything the reports need about one graded submission."""

    student: str
    results: list[TestResult]
    status: str = Status.OK
    notes: list[str] = field(default_factory=list)  # submission-level messages for the student
    output: str = ""  # what the student's code printed while importing (truncated)
    digest: str = ""
    sandbox: str = ""  # the containment layer its code ran in (sandbox.LAYERS)

    def scores(self) -> dict[str, float]:
        """Points earned per question id, in contract order."""
        earned = dict.fromkeys(QUESTION_IDS, 0.0)
        for r in self.results:
            earned[r.question] = earned.get(r.question, 0.0) + r.score
        return {q: round(earned[q], 4) for q in QUESTION_IDS}

    @property
    def total(self) -> float:
        return round(sum(self.scores().values()), 4)

    @property
    def max_total(self) -> float:
        return MAX_TOTAL

    @property
    def needs_review(self) -> bool:
        return any(r.needs_review for r in self.results)
