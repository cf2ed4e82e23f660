"""The mutation suite and the independent solutions graded once per run of the test suite.

Two test files judge the same grades (test_diagnose_engine: what a bug costs; test_check_agrees_
with_grade: mha-check against the grade). Grading them is the suite's largest single piece of
work, so the first process to ask grades them and the others read its copy: under pytest-xdist
the copy lives in the run's shared temporary folder, behind a file lock; in one process it is
kept in memory. Grading is deterministic (test_written_determinism, the engine's own tests), so
a copy is the same grade.
"""

from __future__ import annotations

import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from filelock import FileLock

from mha_check.questions import WRITTEN_QUESTIONS
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outcomes import TestResult as Result
from mha_grader.points import POINTS, Policy
from mha_grader.sandbox import Limits
from tests.mutants.build import SUBMISSIONS

ROOT = Path(__file__).resolve().parent.parent
INDEPENDENT = sorted((ROOT / "tests" / "data" / "independent").iterdir())
LIMITS = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=60.0)
_in_memory: dict[bool, dict] = {}


def stand_in_written(text: str | None) -> list[Result]:
    """Full marks for the written questions: these grades are about the code."""
    return [Result(f"{q}: stand-in", q, POINTS[q], POINTS[q]) for q in WRITTEN_QUESTIONS]


def _grade_all(root: Path, carry_forward: bool) -> dict:
    folders = [s.write(root / s.name) for s in SUBMISSIONS] + INDEPENDENT
    policy = Policy(carry_forward=carry_forward)
    with Engine(limits=LIMITS, grade_written=stand_in_written, policy=policy) as engine:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {f.name: pool.submit(engine.grade, load_submission(f)) for f in folders}
            return {name: f.result() for name, f in futures.items()}


def suite_grades(tmp_path_factory, carry_forward: bool) -> dict:
    """Submission (or independent folder) name -> its Grade, errors carried forward or not."""
    if carry_forward in _in_memory:
        return _in_memory[carry_forward]
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        grades = _grade_all(tmp_path_factory.mktemp("suite"), carry_forward)
    else:  # the run's folder, shared by its processes (each has its own folder inside it)
        shared = tmp_path_factory.getbasetemp().parent
        copy = shared / f"suite-grades-{carry_forward}.pickle"
        with FileLock(f"{copy}.lock"):
            if copy.is_file():
                grades = pickle.loads(copy.read_bytes())
            else:
                grades = _grade_all(tmp_path_factory.mktemp("suite"), carry_forward)
                copy.write_bytes(pickle.dumps(grades))
    _in_memory[carry_forward] = grades
    return grades
