"""Where the student's files and the public tests are."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from .questions import CODE_QUESTIONS, STUDENT_FILES

# The public tests shipped beside mha_check (the repository and the student bundle both put
# them at exercises/tests next to the mha_check folder).
SHIPPED_TESTS = Path(__file__).resolve().parent.parent / "exercises" / "tests"


# Folders that zip tools, editors and Python leave beside the student's files: never the
# submission folder, whatever they hold.
IGNORED_DIRS = frozenset({"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints"})

SEVERAL_FOLDERS = "the files were found in more than one sub-folder"
# What the hand-out puts beside the student's files (exercises/): never handed in, never named.
HANDOUT_FILES = frozenset({"README.md", "lab.ipynb", "lab_helpers.py"})


def choose_folder(found: Mapping[str, Iterable[str]]) -> str | None:
    """The submission folder rule (docs/contract.md §3), one for the check and the grader.

    ``found`` maps "" (the top level) and each sub-folder's name to the student files it holds.
    The top level wins if it holds any; else the one sub-folder that does; else None (none
    holds any, or several do and none is guessed)."""
    holding = {name: set(files) for name, files in found.items() if name not in IGNORED_DIRS}
    if holding.get(""):
        return ""
    candidates = [name for name, files in holding.items() if files]
    return candidates[0] if len(candidates) == 1 else None


def several_folders(found: Mapping[str, Iterable[str]]) -> bool:
    """True when choose_folder found nothing because more than one sub-folder holds files."""
    return (
        choose_folder(found) is None
        and sum(1 for name, files in found.items() if name not in IGNORED_DIRS and set(files)) > 1
    )


def _student_files_in(folder: Path) -> set[str]:
    return {name for name in STUDENT_FILES if (folder / name).is_file()}


def _found(path: Path) -> dict[str, set[str]]:
    found = {"": _student_files_in(path)}
    for sub in sorted(path.iterdir()):
        if sub.is_dir() and sub.name not in IGNORED_DIRS:
            found[sub.name] = _student_files_in(sub)
    return found


def find_student_folder(path: Path) -> Path:
    """The folder holding the student's files: `path` itself, or its one sub-folder that does
    (``path`` when none or several do)."""
    chosen = choose_folder(_found(path))
    return path if chosen is None else path / chosen


def folder_note(path: Path) -> str | None:
    """What to tell the student about where their files were looked for, if anything."""
    return (
        f"{SEVERAL_FOLDERS} of {path}; put them in one folder"
        if several_folders(_found(path))
        else None
    )


def not_handed_in(folder: Path) -> list[str]:
    """The files of the student's own beside theirs that grading never receives (a helper
    module, notes): everything but the student files, the hand-out's and hidden or backup
    files."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    return [
        p.name
        for p in entries
        if p.is_file()
        and p.name not in STUDENT_FILES
        and p.name not in HANDOUT_FILES
        and not p.name.startswith((".", "~"))
        and not p.name.endswith(("~", ".pyc", ".bak", ".swp"))
    ]


def not_handed_in_note(folder: Path) -> str | None:
    """What to say about those files, if any."""
    names = not_handed_in(folder)
    if not names:
        return None
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    handed = ", ".join(STUDENT_FILES[:-1]) + f" and {STUDENT_FILES[-1]}"
    return (
        f"{shown} will not be graded: grading receives {handed} only (an import of a file of "
        "your own fails there, and here too)"
    )


MAX_FILE_BYTES = 1 << 20  # a student file is read up to this (docs/contract.md §3)


def read_regular(path: Path, name: str | None = None) -> tuple[bytes | None, str | None]:
    """A student file's bytes as grading reads them (docs/contract.md §3), for the check and
    the grader alike: a regular file, never a symbolic link, opened without waiting on a FIFO
    (O_NONBLOCK, then fstat says what it is), up to MAX_FILE_BYTES + 1 bytes (one more tells
    it is too large). ``(data, None)``, ``(None, why it is refused)``, or ``(None, None)`` when
    there is no such file."""
    name = name or path.name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError:
        return None, f"{name} could not be read (a symbolic link is not accepted)"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None, f"{name} is not a regular file"
        return f.read(MAX_FILE_BYTES + 1), None


def read_code_file(path: Path) -> tuple[str | None, str | None]:
    """A code file as grading receives it (docs/contract.md §3): ``read_regular``'s rule, UTF-8
    text (a BOM allowed); ``(text, None)``, or ``(None, why grading cannot read it)``."""
    name = path.name
    data, problem = read_regular(path)
    if data is None:
        return None, problem
    if len(data) > MAX_FILE_BYTES:
        return None, f"{name} is larger than {MAX_FILE_BYTES // 1024} KB and would not be graded"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as e:
        return None, (
            f"{name} is not valid UTF-8 text (invalid byte at position {e.start}), so grading "
            "cannot read it; save it as UTF-8"
        )


def handed_in(folder: Path, into: Path) -> dict[str, str]:
    """Write into ``into`` the code files of ``folder`` exactly as grading's worker gets them
    (read by ``read_code_file``, written as UTF-8 text), and nothing else: code run from there
    finds no file of the student's beside it, as in grading. Returns file -> why it could not
    be read (such a file is left out, as grading leaves it out)."""
    problems = {}
    for name in STUDENT_FILES:
        if not name.endswith(".py"):
            continue
        text, problem = read_code_file(folder / name)
        if problem is not None:
            problems[name] = problem
        elif text is not None:
            (into / name).write_text(text, encoding="utf-8")
    return problems


def default_path(cwd: Path) -> Path:
    """./exercises, or the current folder when the student runs mha-check from inside it."""
    if not (cwd / "exercises").is_dir() and _student_files_in(cwd):
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
