"""Where the student's files and the public tests are."""

from __future__ import annotations

from pathlib import Path

from .questions import CODE_QUESTIONS, STUDENT_FILES

# The public tests shipped beside mha_check (the repository and the student bundle both put
# them at exercises/tests next to the mha_check folder).
SHIPPED_TESTS = Path(__file__).resolve().parent.parent / "exercises" / "tests"


def _holds_student_files(folder: Path) -> bool:
    return any((folder / name).is_file() for name in STUDENT_FILES)


def find_student_folder(path: Path) -> Path:
    """The folder holding the student's files: `path` itself, or its one sub-folder that does."""
    if _holds_student_files(path):
        return path
    subs = [p for p in sorted(path.iterdir()) if p.is_dir() and _holds_student_files(p)]
    return subs[0] if len(subs) == 1 else path


def default_path(cwd: Path) -> Path:
    """./exercises, or the current folder when the student runs mha-check from inside it."""
    if not (cwd / "exercises").is_dir() and _holds_student_files(cwd):
        return cwd
    return cwd / "exercises"


def _holds_tests(folder: Path) -> bool:
    return any((folder / f"{qid}.py").is_file() for qid in CODE_QUESTIONS)


def find_tests(student_folder: Path) -> Path | None:
    """The public tests: `tests/` beside the student's files, else those shipped with mha-check."""
    for candidate in (student_folder / "tests", SHIPPED_TESTS):
        if _holds_tests(candidate):
            return candidate
    return None
