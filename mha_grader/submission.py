"""Load a submission (a folder or a ``.zip``) as text, without trusting anything in it.

A submission holds ``multihead.py``, ``crosscheck.py`` and ``answers.md`` at its top or inside
one single sub-folder (contract §3). Zips are read in memory, member by member, with size
limits; nothing is extracted, and names that are absolute or climb out (``../``) are ignored.
Symbolic links are refused (a link could point at the solutions). A file that is missing, too
large or not UTF-8 text is recorded as a problem that costs only the questions depending on it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .questions import STUDENT_FILES

MAX_FILE_BYTES = 1 << 20  # per student file
MAX_ZIP_MEMBERS = 2000
MAX_ZIP_TOTAL = 32 << 20  # bytes of all members we agree to look at, uncompressed
IGNORED_DIRS = {"__MACOSX", "__pycache__", ".git", ".ipynb_checkpoints"}


@dataclass
class Problem:
    kind: str  # "missing" or "unreadable"
    message: str  # for the student


@dataclass
class Submission:
    student: str
    source: str  # where it came from (for the instructor)
    files: dict[str, str] = field(default_factory=dict)  # file name -> text
    problems: dict[str, Problem] = field(default_factory=dict)  # file name -> what is wrong
    notes: list[str] = field(default_factory=list)  # about the whole submission

    def digest(self) -> str:
        """A hash of what will be graded (for resuming a batch)."""
        h = hashlib.sha256()
        for name in STUDENT_FILES:
            h.update(name.encode() + b"\0")
            h.update(self.files.get(name, "\0missing").encode() + b"\0")
        return h.hexdigest()


def student_id(path: Path) -> str:
    """The folder's or zip's name without ``.zip``, made safe to use as a folder name."""
    name = path.name[:-4] if path.name.lower().endswith(".zip") else path.name
    return safe_id(name)


def safe_id(name: str) -> str:
    """The id rule: characters other than letters, digits and ``._@+-`` become ``_``. Also used
    to match a roster's logins and emails to submissions (mha-grade export)."""
    safe = re.sub(r"[^A-Za-z0-9._@+-]", "_", name).lstrip(".")
    return safe or "unnamed"


def _decode(name: str, data: bytes, sub: Submission) -> None:
    if len(data) > MAX_FILE_BYTES:
        sub.problems[name] = Problem(
            "unreadable", f"{name} is larger than {MAX_FILE_BYTES // 1024} KB and was not graded"
        )
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if name == "answers.md":  # prose: a stray byte should not cost six answers
            sub.files[name] = data.decode("utf-8-sig", errors="replace")
            sub.notes.append(
                f"answers.md is not valid UTF-8 (invalid byte at position {e.start}); the bytes "
                "that are not were read as '\ufffd' and the answers graded as they stand"
            )
            return
        sub.problems[name] = Problem(
            "unreadable",
            f"{name} is not valid UTF-8 text (invalid byte at position {e.start}); "
            "save it as UTF-8 and submit again",
        )
        return
    sub.files[name] = text


def _finish(sub: Submission) -> Submission:
    for name in STUDENT_FILES:
        if name not in sub.files and name not in sub.problems:
            sub.problems[name] = Problem("missing", f"{name} is missing from the submission")
    return sub


def _choose_folder(candidates: dict[str, set[str]]) -> str | None:
    """Top level if it holds any expected file, else the one sub-folder that does."""
    if candidates.get(""):
        return ""
    holding = [d for d, names in candidates.items() if names]
    return holding[0] if len(holding) == 1 else None


def load_folder(path: Path) -> Submission:
    sub = Submission(student_id(path), str(path))
    candidates: dict[str, set[str]] = {"": set()}
    for entry in os.scandir(path):
        if entry.name in STUDENT_FILES:
            candidates[""].add(entry.name)
        elif entry.is_dir(follow_symlinks=False) and entry.name not in IGNORED_DIRS:
            inner = {e.name for e in os.scandir(entry.path) if e.name in STUDENT_FILES}
            candidates[entry.name] = inner
    folder = _choose_folder(candidates)
    if folder is None:
        if len([d for d, n in candidates.items() if n]) > 1:
            sub.notes.append("the files were found in more than one sub-folder; nothing graded")
        return _finish(sub)
    base = Path(path, folder)
    for name in sorted(candidates[folder]):
        file = base / name
        try:
            fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            sub.problems[name] = Problem(
                "unreadable", f"{name} could not be read (a symbolic link is not accepted)"
            )
            continue
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                sub.problems[name] = Problem("unreadable", f"{name} is not a regular file")
                continue
            _decode(name, f.read(MAX_FILE_BYTES + 1), sub)
    return _finish(sub)


def _safe_member(name: str) -> PurePosixPath | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or not p.parts or re.match(r"^[A-Za-z]:", name):
        return None
    return p


def load_zip(path: Path) -> Submission:
    sub = Submission(student_id(path), str(path))
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        sub.notes.append(f"the zip file could not be opened ({e}); nothing graded")
        return _finish(sub)
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_ZIP_MEMBERS:
            sub.notes.append(f"the zip holds more than {MAX_ZIP_MEMBERS} files; nothing graded")
            return _finish(sub)
        candidates: dict[str, dict[str, zipfile.ZipInfo]] = {"": {}}
        skipped = 0
        for info in infos:
            p = _safe_member(info.filename)
            if p is None:
                skipped += 1
                continue
            if info.is_dir() or p.name not in STUDENT_FILES or len(p.parts) > 2:
                continue
            if len(p.parts) == 2 and p.parts[0] in IGNORED_DIRS:
                continue
            folder = p.parts[0] if len(p.parts) == 2 else ""
            candidates.setdefault(folder, {})[p.name] = info
        if skipped:
            sub.notes.append(f"{skipped} zip entries with absolute or '..' paths were ignored")
        folder = _choose_folder({d: set(m) for d, m in candidates.items()})
        if folder is None:
            return _finish(sub)
        budget = MAX_ZIP_TOTAL
        for name, info in sorted(candidates[folder].items()):
            try:
                with zf.open(info) as member:  # read at most the limit: sizes can lie
                    data = member.read(min(MAX_FILE_BYTES, budget) + 1)
            except Exception as e:  # corrupt member, encryption, bad compression
                sub.problems[name] = Problem("unreadable", f"{name} could not be read ({e})")
                continue
            budget -= len(data)
            _decode(name, data, sub)
    return _finish(sub)


def load_submission(path: str | os.PathLike) -> Submission:
    """A folder or ``.zip`` as a Submission; never raises for a student's mistake."""
    path = Path(path)
    if path.is_dir():
        return load_folder(path)
    if path.is_file() and path.suffix.lower() == ".zip":
        return load_zip(path)
    raise FileNotFoundError(f"{path}: not a submission folder or .zip file")
