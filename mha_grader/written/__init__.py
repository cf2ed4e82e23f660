"""Grading of the written answers in answers.md against rubric concepts (autograder/rubrics/)."""

from .grade import NEEDS_REVIEW, grade_answer, grade_written, needs_review, warm
from .rubric import RubricError, load_rubrics

__all__ = [
    "NEEDS_REVIEW",
    "RubricError",
    "grade_answer",
    "grade_written",
    "load_rubrics",
    "needs_review",
    "warm",
]
