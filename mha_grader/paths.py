"""Where the project's trusted folders are. The grader runs from a checkout (or an unpacked
autograder zip) with this layout; none of these folders is ever visible to student code."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
PUBLIC_TESTS = EXERCISES / "tests"
SOLUTIONS = ROOT / "solutions"
AUTOGRADER = ROOT / "autograder"
HIDDEN_TESTS = AUTOGRADER / "tests"
RUBRICS = AUTOGRADER / "rubrics"
POINTS_FILE = AUTOGRADER / "points.toml"


def ensure_solutions_importable() -> None:
    """Put the checkout first on sys.path: the hidden tests and the diagnosis import the
    reference as ``solutions`` (trusted side only; the sandbox never sees this folder)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
