"""Question ids (contract §2), the file each depends on, and their points."""

from __future__ import annotations

import tomllib

from .paths import POINTS_FILE

CODE_QUESTIONS: dict[str, str] = {  # question id -> student file that defines it
    "softmax": "multihead.py",
    "split_heads": "multihead.py",
    "merge_heads": "multihead.py",
    "attention": "multihead.py",
    "multi_head_attention": "multihead.py",
    "distinct_head_pairs": "multihead.py",
    "parameter_counts": "multihead.py",
    "weights_from_torch": "crosscheck.py",
    "cross_check": "crosscheck.py",
}
WRITTEN_QUESTIONS: tuple[str, ...] = ("q1", "q2", "q3", "q4", "q5", "challenge")
QUESTION_IDS: tuple[str, ...] = (*CODE_QUESTIONS, *WRITTEN_QUESTIONS)
STUDENT_FILES: tuple[str, ...] = ("multihead.py", "crosscheck.py", "answers.md")


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
