"""Question ids (docs/contract.md §2), the file each depends on, and their points."""

from __future__ import annotations

import tomllib

# The ids and files are declared once, in the student-side package (it ships to students
# without the grader); the grader adds the points.
from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS, STUDENT_FILES, WRITTEN_QUESTIONS

from .paths import POINTS_FILE

__all__ = ["CODE_QUESTIONS", "QUESTION_IDS", "STUDENT_FILES", "WRITTEN_QUESTIONS"]
__all__ += ["MAX_TOTAL", "POINTS", "load_points"]


def load_points() -> dict[str, float]:
    """Points per question id, in contract order, from autograder/points.toml."""
    with open(POINTS_FILE, "rb") as f:
        raw = tomllib.load(f)
    missing = [q for q in QUESTION_IDS if q not in raw]
    unknown = [q for q in raw if q not in QUESTION_IDS]
    if missing or unknown:
        raise ValueError(f"{POINTS_FILE}: missing ids {missing}, unknown ids {unknown}")
    return {q: raw[q] for q in QUESTION_IDS}


POINTS: dict[str, float] = load_points()
MAX_TOTAL: float = sum(POINTS.values())
