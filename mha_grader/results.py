"""Result records shared by every part of the grader (code tests, written answers, diagnosis)."""

from __future__ import annotations

from dataclasses import dataclass, field

DIAGNOSIS_PREFIX = "Diagnosis: "  # starts the line a diagnosis adds to a failing case's output


@dataclass
class TestResult:
    """One graded test case, as it appears in Gradescope's results.json ``tests`` list."""

    name: str  # always starts with the question id, e.g. "softmax: rows sum to 1"
    question: str  # question id from questions.QUESTION_IDS
    score: float
    max_score: float
    output: str = ""  # for the student: teaches, never shows hidden inputs or expected values
    visibility: str = "visible"  # Gradescope: visible, hidden, after_due_date, after_published
    tags: list[str] = field(default_factory=list)  # "misconception:<id>", "needs-review"

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score
