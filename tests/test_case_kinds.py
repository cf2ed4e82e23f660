"""Public ⊆ hidden, and back (issue 20): every behaviour a public check tests is graded by some
hidden case, on other inputs, and every hidden case's kind is in the public checks.

Each case says what it checks with a marker below its ``@test_case``: ``@kinds(...)`` in the
public files (``exercises/tests/<qid>.py``, which define it themselves: they ship to students)
and ``@checks.kinds(...)`` in the hidden ones (``autograder/tests/<qid>.py``). A kind is a short
phrase for a situation and what is expected there ("a 3-D array, the default axis", "ValueError:
a reshape would not fail"), spelled the same on both sides.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from otter.test_files.exception_test import ExceptionTestFile

from mha_check.questions import CODE_QUESTIONS
from mha_grader.grading import hidden

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "exercises" / "tests"
HIDDEN = ROOT / "autograder" / "tests"


def case_kinds(path: Path) -> dict[str, tuple[str, ...]]:
    """Each case of an otter test file (by its function's name) -> the kinds it is marked with
    (() when it has no marker)."""
    test_file = ExceptionTestFile.from_file(str(path))
    return {
        tc.body.test_func.__name__: tuple(getattr(tc.body.test_func, "kinds", ()))
        for tc in test_file.test_cases
    }


def gaps(public: dict[str, tuple], secret: dict[str, tuple]) -> dict[str, list[str]]:
    """The kinds one side tests and the other does not."""
    seen_public = {k for ks in public.values() for k in ks}
    seen_hidden = {k for ks in secret.values() for k in ks}
    return {
        "tested by mha-check, graded by no hidden case": sorted(seen_public - seen_hidden),
        "graded, but in no public check": sorted(seen_hidden - seen_public),
    }


@pytest.mark.parametrize("qid", list(CODE_QUESTIONS))
def test_every_case_says_what_it_checks(qid):
    for path in (PUBLIC / f"{qid}.py", HIDDEN / f"{qid}.py"):
        unmarked = [name for name, kinds in case_kinds(path).items() if not kinds]
        assert unmarked == [], f"{path.relative_to(ROOT)}: cases without a kinds marker"
        for kinds in case_kinds(path).values():
            assert all(type(k) is str and k.strip() == k and k for k in kinds), kinds


@pytest.mark.parametrize("qid", list(CODE_QUESTIONS))
def test_public_and_hidden_cases_check_the_same_kinds(qid):
    found = gaps(case_kinds(PUBLIC / f"{qid}.py"), case_kinds(HIDDEN / f"{qid}.py"))
    assert found == {side: [] for side in found}, qid


def test_a_kind_on_one_side_only_is_found():
    public = {"test_a": ("a 1-D array",), "test_b": ("axis=0", "float32 scores")}
    secret = {"one": ("axis=0",), "two": ("float32 scores", "a 3-D array, the default axis")}
    assert gaps(public, secret) == {
        "tested by mha-check, graded by no hidden case": ["a 1-D array"],
        "graded, but in no public check": ["a 3-D array, the default axis"],
    }
    assert gaps(public, {"one": ("a 1-D array", "axis=0", "float32 scores")}) == {
        "tested by mha-check, graded by no hidden case": [],
        "graded, but in no public check": [],
    }


def test_the_instructors_guide_counts_the_hidden_cases():
    total = sum(len(hidden.case_names(q)) for q in CODE_QUESTIONS)
    text = (ROOT / "docs" / "instructors.md").read_text()
    said = re.findall(r"(\d+) cases in all", text)
    assert said == [str(total)]
