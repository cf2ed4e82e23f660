"""A graded class built without grading (for the review tests): real Grades, sealed the way a
batch seals them, with flagged written answers, a grader error and clean questions."""

from __future__ import annotations

from pathlib import Path

from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS, WRITTEN_QUESTIONS
from mha_grader.grading.submission import Submission
from mha_grader.outcomes import Grade, TestResult
from mha_grader.outputs.folder import CODE_FILES, OutputFolder
from mha_grader.points import POINTS
from mha_grader.runs.record import record_grade

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
            results.append(TestResult.grader_failure(q))
            continue
        score = round(POINTS[q] * share.get(q, 1.0), 4)
        name = f"{q}: written answer" if q in WRITTEN_QUESTIONS else f"{q}: the hidden checks"
        output = "Recognised: an idea." if q in WRITTEN_QUESTIONS else "passed"
        tags = []
        result = TestResult(name, q, score, POINTS[q], output, tags=tags)
        if q in flagged:
            result.output += "\n" + flagged[q]
            result.flag(flagged[q])
        results.append(result)
    status = "grader-error" if failed else "ok"
    return Grade(student, results, status=status, digest=f"digest-{student}")


def seal(out: Path, grade: Grade, answers: dict[str, str] | None = None, files=None) -> None:
    """Write the student's reports and seal as a batch does; the grade sheet gets their row."""
    files = dict(files or code_files())
    files["answers.md"] = answers_md(answers or ANSWERS)
    submission = Submission(grade.student, f"/submissions/{grade.student}", files)
    folder = OutputFolder(out)
    row = record_grade(folder, grade, f"test:{submission.digest()}", submission)
    sources = folder.read_sources() | {grade.student: {n: files[n] for n in CODE_FILES}}
    folder.write_sources(sources)
    rows = [r for r in OutputFolder(out).read_grades() if r["student"] != grade.student]
    OutputFolder(out).write_grades(sorted([*rows, row], key=lambda r: r["student"]))


def small_class(out: Path) -> None:
    """Four students: a grader error (ana, softmax), two flagged answers (ben q1 at a quarter,
    cy q3 at a half), and dee with nothing flagged."""
    seal(out, make_grade("ana", failed=("softmax",)))
    seal(out, make_grade("ben", share={"q1": 0.25}, flagged={"q1": KEYWORDS}))
    seal(out, make_grade("cy", share={"q3": 0.5}, flagged={"q3": "It says two opposite things."}))
    seal(out, make_grade("dee", share={"q2": 0.5}))
