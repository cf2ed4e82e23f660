"""A graded class built without grading (for the review tests): real Grades, sealed the way a
batch seals them, with flagged written answers, a grader error and clean questions."""

from __future__ import annotations

from pathlib import Path

from mha_grader import report, runinfo
from mha_grader.batch import write_seal
from mha_grader.engine import GRADER_FAILED, Grade
from mha_grader.questions import CODE_QUESTIONS, POINTS, QUESTION_IDS, WRITTEN_QUESTIONS
from mha_grader.results import TestResult
from mha_grader.submission import Submission

ROOT = Path(__file__).resolve().parent.parent
KEYWORDS = "This reads as a list of keywords rather than sentences: a teacher will read it."

ANSWERS = {
    "q1": "Each head takes a slice of the shared projections Q, K and V.",
    "q2": "The same: 4 * d_model**2 for any number of heads.",
    "q3": "No, the heads attend to different tokens.",
    "q4": "More, smaller heads: each head's width shrinks.",
    "q5": "num_heads must divide d_model.",
    "challenge": "One head can only follow one kind of relation at a time.",
}


def answers_md(answers: dict[str, str]) -> str:
    parts = ["# Module 08 — written answers", ""]
    for q in WRITTEN_QUESTIONS:
        heading = "Challenge" if q == "challenge" else q.upper()
        parts += [f"## {heading}", "", "> the question", "", answers.get(q, ""), ""]
    return "\n".join(parts)


def code_files() -> dict[str, str]:
    return {name: (ROOT / "solutions" / name).read_text() for name in CODE_QUESTIONS.values()}


def make_grade(
    student: str,
    share: dict[str, float] | None = None,
    flagged: dict[str, str] | None = None,
    failed: tuple[str, ...] = (),
) -> Grade:
    """Full marks except ``share`` (question -> share of its points); ``flagged`` questions carry
    needs-review with that reason; ``failed`` questions are grader errors."""
    share, flagged = share or {}, flagged or {}
    results = []
    for q in QUESTION_IDS:
        if q in failed:
            results.append(
                TestResult(
                    f"{q}: not graded", q, 0.0, POINTS[q], GRADER_FAILED, tags=["needs-review"]
                )
            )
            continue
        score = round(POINTS[q] * share.get(q, 1.0), 4)
        name = f"{q}: written answer" if q in WRITTEN_QUESTIONS else f"{q}: the hidden checks"
        output = "Recognised: an idea." if q in WRITTEN_QUESTIONS else "passed"
        tags = []
        if q in flagged:
            output += "\n" + flagged[q]
            tags = ["needs-review"]
        results.append(TestResult(name, q, score, POINTS[q], output, tags=tags))
    status = "grader-error" if failed else "ok"
    return Grade(student, results, status=status, digest=f"digest-{student}")


def seal(out: Path, grade: Grade, answers: dict[str, str] | None = None, files=None) -> None:
    """Write the student's reports and seal as a batch does; the grade sheet gets their row."""
    files = dict(files or code_files())
    files["answers.md"] = answers_md(answers or ANSWERS)
    submission = Submission(grade.student, f"/submissions/{grade.student}", files)
    row = write_seal(out, grade, f"test:{submission.digest()}", submission)
    sources = runinfo.read_sources(out) | {grade.student: {n: files[n] for n in runinfo.CODE_FILES}}
    runinfo.write_sources(out, sources)
    rows = [r for r in report.read_grades_csv(out) if r["student"] != grade.student]
    report.write_grades_csv(out, sorted([*rows, row], key=lambda r: r["student"]))


def small_class(out: Path) -> None:
    """Four students: a grader error (ana, softmax), two flagged answers (ben q1 at a quarter,
    cy q3 at a half), and dee with nothing flagged."""
    seal(out, make_grade("ana", failed=("softmax",)))
    seal(out, make_grade("ben", share={"q1": 0.25}, flagged={"q1": KEYWORDS}))
    seal(out, make_grade("cy", share={"q3": 0.5}, flagged={"q3": "It says two opposite things."}))
    seal(out, make_grade("dee", share={"q2": 0.5}))
