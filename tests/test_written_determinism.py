"""A grade never depends on Python's hash seed: which word of a synonym group stands for a stem
(and so which words a typo is read as) used to follow the order of a set, and "diffrence" was
read as "difference" in some processes and as nothing in others."""

from __future__ import annotations

import os
import subprocess
import sys

from mha_grader.paths import ROOT
from mha_grader.written.rubric import load_rubrics

SLIPPED = "There was a clear diffrence between the two heads."
SCRIPT = (
    f"from mha_grader.written import grade_answer\nprint(grade_answer('q3', {SLIPPED!r}).score)"
)


def _score_with_seed(seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_grade_is_the_same_whatever_the_hash_seed():
    assert len({_score_with_seed(seed) for seed in range(6)}) == 1


def test_a_typo_can_be_read_as_any_word_of_a_synonym_group():
    words = {w for w, s in load_rubrics()["q3"].vocabulary["d"] if s == "differ"}
    assert {"different", "difference", "differ"} <= words
