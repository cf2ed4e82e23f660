"""Grade one submission into an output folder (``mha-grade one``): its reports and seal, its row
of the grade sheet (the other students' rows kept), the decisions that still hold, the summary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..grading.engine import Engine
from ..grading.fingerprint import grader_fingerprint, submission_key
from ..grading.submission import load_submission
from ..outcomes import Grade
from ..outputs.folder import OutputFolder
from ..outputs.summary import build_summary
from ..sandbox import LayerInfo, Limits
from .record import record_grade, settle_reviews


def grade_one(
    path: Path,
    out: OutputFolder,
    limits: Limits,
    require: str | None = None,
    on_layer: Callable[[LayerInfo], None] | None = None,
) -> tuple[Grade, dict[str, str]]:
    """Grade the submission at ``path`` into ``out``; returns the grade and its row as the grade
    sheet now has it. Raises LayerUnavailable before grading when no sandbox layer qualifies,
    FileNotFoundError when ``path`` is not a submission."""
    out.make()
    engine = Engine(limits, require=require, protect=(out.root, path))
    engine.start()  # it boots in the background while the submission is read
    if on_layer is not None:
        on_layer(engine.layer)
    with engine:
        submission = load_submission(path)
        grade = engine.grade(submission)
    key = submission_key(submission, grader_fingerprint())
    row = record_grade(out, grade, key, submission)  # a later batch into OUT reuses it
    # One output folder can collect several `one` runs: replace this student's row only.
    rows = [r for r in out.read_grades() if r.get("student") != grade.student]
    rows = settle_reviews(out, [*rows, row], "one")  # a person's decisions still hold
    out.write_grades(rows)
    build_summary(out, plots=False)
    return grade, next(r for r in rows if r.get("student") == grade.student)
