"""What every run does with what it graded (``one``, ``batch``, ``merge``, the review commands):
each student's reports and seal, then the grade sheet with the decisions that still hold, then
the similarity report."""

from __future__ import annotations

import sys
import time

from ..grading.submission import Submission
from ..outcomes import Grade, Status
from ..outputs import reports, similarity
from ..outputs.folder import OutputFolder, Seal
from ..review import apply, decisions


def record_grade(
    out: OutputFolder,
    grade: Grade,
    key: str,
    submission: Submission,
    review: tuple[dict, dict] | None = None,
) -> dict[str, str]:
    """Write the student's reports (with the review decisions ``review`` on this student, as
    ``decisions.Reviews.of`` gives them), then seal them: the grade-sheet row, the key, the
    grade as graded and what a review decision would judge. The seal is the last step; returns
    the row as graded."""
    judged = decisions.judged(submission.files)
    shown = apply.as_graded(grade, judged["hashes"], *review) if review else grade
    out.write_reports(shown)
    row = reports.grade_row(grade)
    out.write_seal(
        Seal(
            grade.student,
            key,
            row,
            submission.source,
            grade,
            judged["hashes"],
            judged["answers"],
        )
    )
    return row


def failure_row(sid: str) -> dict[str, str]:
    """A grade-sheet row for a student the grader itself failed on: zero, flagged, not sealed
    (so the next run tries again)."""
    return {**reports.grade_row(Grade(sid, [], status=Status.GRADER_ERROR)), "needs_review": "true"}


def decisions_or_none(out: OutputFolder) -> decisions.Reviews | None:
    """The decisions in ``out`` (None when there are none, or they cannot be read: ``settle``
    says so at the end)."""
    try:
        store = decisions.load(out)
    except decisions.ReviewsError:
        return None
    return store if store.decisions or store.reopened else None


def settle_reviews(out: OutputFolder, rows: list[dict[str, str]], command: str) -> list[dict]:
    """The rows with the review decisions that still hold (see ``apply.settle``); a broken
    reviews.toml costs the decisions, never the grades."""
    try:
        settled = apply.settle(out, rows)
    except decisions.ReviewsError as e:
        print(f"mha-grade {command}: review decisions not applied: {e}", file=sys.stderr)
        return rows
    apply.report_settled(settled, command)
    return settled.rows


def compare_class(
    out: OutputFolder, sources: dict[str, dict[str, str]] | None, prints: dict | None = None
) -> None:
    """Write the similarity report for ``sources``, or remove a stale one (None: not compared);
    ``prints`` are fingerprints already made of some of them."""
    if sources is None:
        out.remove_similarity()
        return
    start = time.perf_counter()
    try:
        result = similarity.compare(sources, given=prints)
        similarity.write(out, result)
        seconds = time.perf_counter() - start
        print(f"similarity: {len(sources)} submissions compared in {seconds:.2f} s")
    except Exception as e:  # never lose a batch's grades to the similarity report
        print(f"mha-grade: the similarity report failed: {e!r}", file=sys.stderr)
