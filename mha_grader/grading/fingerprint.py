"""The grading key: what decides a grade, hashed, so that an unchanged submission graded by an
unchanged grader is not graded again (a resumable batch, docs/contract.md §4)."""

from __future__ import annotations

import hashlib

from ..paths import AUTOGRADER, ROOT, SOLUTIONS
from .submission import Submission


def grader_fingerprint() -> str:
    """A hash of the hidden tests, rubrics (and the hand-outs snapshot they read copies
    against), points and reference solutions: change any of them and the next batch regrades
    everyone. (After upgrading the grader's code, use --regrade.)"""
    h = hashlib.sha256()
    for folder in (AUTOGRADER, SOLUTIONS):
        for path in sorted(folder.rglob("*")):
            if (
                path.is_file()
                and path.suffix in {".py", ".toml", ".json"}
                and "__pycache__" not in path.parts
            ):
                h.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def submission_key(submission: Submission, fingerprint: str) -> str:
    """The key a student's seal is graded under: the grader's and the submission's hashes."""
    return f"{fingerprint}:{submission.digest()}"
