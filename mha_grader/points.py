"""Question ids (docs/contract.md §2), the file each depends on, their points, and the grading
policy (the ``[policy]`` table of the same file, ``autograder/points.toml``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

# The ids and files are declared once, in the student-side package (it ships to students
# without the grader); the grader adds the points.
from mha_check.questions import (
    CALLEES,
    CODE_QUESTIONS,
    NUMPY_QUESTIONS,
    QUESTION_IDS,
    STUDENT_FILES,
    WRITTEN_QUESTIONS,
)

from .paths import POINTS_FILE

__all__ = ["CALLEES", "CODE_QUESTIONS", "NUMPY_QUESTIONS", "QUESTION_IDS", "STUDENT_FILES"]
__all__ += ["WRITTEN_QUESTIONS"]
__all__ += ["MAX_TOTAL", "POINTS", "POLICY", "Policy", "load_points", "load_policy"]


def _read(path=POINTS_FILE) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def load_points(path=POINTS_FILE) -> dict[str, float]:
    """Points per question id, in contract order, from autograder/points.toml."""
    raw = {k: v for k, v in _read(path).items() if k != "policy"}
    missing = [q for q in QUESTION_IDS if q not in raw]
    unknown = [q for q in raw if q not in QUESTION_IDS]
    if missing or unknown:
        raise ValueError(f"{path}: missing ids {missing}, unknown ids {unknown}")
    return {q: raw[q] for q in QUESTION_IDS}


@dataclass(frozen=True)
class Policy:
    """How a grade is reached beyond points (points.toml's ``[policy]``; part of the grading
    key, so changing it regrades a batch)."""

    carry_forward: bool = True  # docs/contract.md §7: one bug is charged once


def load_policy(path=POINTS_FILE) -> Policy:
    """The ``[policy]`` table of points.toml (defaults where a key is absent)."""
    raw = _read(path).get("policy", {})
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: [policy] must be a table")
    if "numpy_only" in raw:
        raise ValueError(
            f"{path}: [policy] numpy_only is no longer read: the NumPy questions run where "
            "only NumPy and the standard library can be imported (docs/instructors.md, "
            "'NumPy means NumPy'); remove the key"
        )
    unknown = set(raw) - {"carry_forward"}
    if unknown:
        raise ValueError(f"{path}: unknown [policy] keys {sorted(unknown)}")
    policy = Policy(**raw)
    if type(policy.carry_forward) is not bool:
        raise ValueError(f"{path}: [policy] carry_forward must be true or false")
    return policy


POINTS: dict[str, float] = load_points()
MAX_TOTAL: float = sum(POINTS.values())
POLICY: Policy = load_policy()
