"""Where the project's trusted folders are. The grader runs from a checkout (or an unpacked
autograder zip) with this layout; none of these folders is ever visible to student code."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
PUBLIC_TESTS = EXERCISES / "tests"
SOLUTIONS = ROOT / "solutions"
AUTOGRADER = ROOT / "autograder"
HIDDEN_TESTS = AUTOGRADER / "tests"
RUBRICS = AUTOGRADER / "rubrics"
POINTS_FILE = AUTOGRADER / "points.toml"
