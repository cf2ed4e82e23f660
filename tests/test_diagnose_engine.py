"""The mutation suite graded through the real engine (sandbox, hidden tests, diagnosis).

Each buggy submission loses points only on the questions that contain or call its bug (always on
the one that contains it), and the failing cases carry exactly its misconception tags; correct
alternatives lose nothing and mistakes outside the catalogue carry no tag.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from mha_grader import report
from mha_grader.engine import Engine
from mha_grader.questions import CODE_QUESTIONS, POINTS, WRITTEN_QUESTIONS
from mha_grader.results import TestResult as Result
from mha_grader.sandbox import Limits
from mha_grader.submission import load_submission
from tests.mutants.build import SUBMISSIONS

LIMITS = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=60.0)


def stand_in_written(text: str | None) -> list[Result]:
    return [Result(f"{q}: stand-in", q, POINTS[q], POINTS[q]) for q in WRITTEN_QUESTIONS]


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    """Every submission of the suite graded once, two at a time (the engine is thread-safe)."""
    root = tmp_path_factory.mktemp("mutants")
    with Engine(limits=LIMITS, grade_written=stand_in_written) as engine:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {
                s.name: pool.submit(engine.grade, load_submission(s.write(root / s.name)))
                for s in SUBMISSIONS
            }
            return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("sub", SUBMISSIONS, ids=lambda s: s.name)
def test_graded_submission_loses_points_only_where_the_bug_is_and_is_tagged(grades, sub):
    grade = grades[sub.name]
    assert grade.status == "ok", grade.notes
    scores = grade.scores()
    lost = {q for q in CODE_QUESTIONS if scores[q] < POINTS[q]}
    # cross_check honestly reporting a wrong pipeline is not punished, so callers may keep
    # their points; the function with the bug never does
    assert lost <= set(sub.affects)
    assert sub.blame is None or sub.blame in lost
    want = [f"misconception:{i}" for i in sub.ids]
    for r in grade.results:
        tags = [t for t in r.tags if t.startswith("misconception:")]
        assert tags == ([] if r.passed else want), r.name
        if not r.passed and sub.ids:
            assert "Diagnosis: " in r.output
    if sub.ids:
        assert "(known mistake: " in report.feedback_md(grade)
