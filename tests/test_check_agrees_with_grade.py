"""mha-check never contradicts the grade (issue 12), over the mutation suite and every correct
alternative (tests/mutants/ and the independent solutions of tests/data/independent/).

A question that grading gives full marks never fails mha-check (it passes, or waits on a callee
that fails its own checks), and every mha-check failure in the mutation suite is on the function
that holds the bug.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS
from mha_grader.points import POINTS
from tests.mutants.build import SUBMISSIONS
from tests.suite_grades import INDEPENDENT, suite_grades

ROOT = Path(__file__).resolve().parent.parent
BLAME = {s.name: s.blame for s in SUBMISSIONS} | {p.name: None for p in INDEPENDENT}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("class")
    return [s.write(root / s.name) for s in SUBMISSIONS] + INDEPENDENT


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict[str, float]]:
    """Every folder graded by the engine, errors carried forward (points.toml's policy)."""
    return {name: g.scores() for name, g in suite_grades(tmp_path_factory, True).items()}


@pytest.fixture(scope="module")
def checked(folders) -> dict[str, dict[str, list[str]]]:
    """What mha-check says of every folder: question -> [status, message]."""
    driver = ROOT / "tests" / "check_driver.py"
    done = subprocess.run(
        [sys.executable, str(driver), *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(BLAME))
def test_full_marks_never_fail_the_local_check(checked, graded, name):
    scores, said = graded[name], checked[name]
    contradicted = {
        q: said[q][1] for q in CODE_QUESTIONS if scores[q] == POINTS[q] and said[q][0] == "FAILED"
    }
    assert contradicted == {}


@pytest.mark.parametrize("name", sorted(BLAME))
def test_local_check_fails_only_the_function_that_holds_the_bug(checked, name):
    failed = {q for q, (status, _) in checked[name].items() if status == "FAILED"}
    blame = BLAME[name]
    assert failed <= ({blame} if blame else set()), {q: checked[name][q][1] for q in failed}
    if blame is None:
        assert {q for q, (s, _) in checked[name].items() if s != "PASSED"} == set()


def test_a_composite_waits_on_its_failing_callee_and_names_it(checked):
    waits = [
        (name, q, msg)
        for name, said in checked.items()
        for q, (status, msg) in said.items()
        if status == "WAITING"
    ]
    assert waits, "the suite has composites whose callee fails its own checks"
    for name, q, msg in waits:
        assert f"Fix {BLAME[name]} first" in msg, (name, q, msg)
