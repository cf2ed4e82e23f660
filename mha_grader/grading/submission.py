"""Load a submission (a folder or a ``.zip``) as text, without trusting anything in it.

A submission holds ``multihead.py``, ``crosscheck.py`` and ``answers.md`` at its top or inside
one single sub-folder (docs/contract.md §3). Zips are read in memory, member by member, with size
limits; nothing is extracted, and names that are absolute or climb out (``../``) are ignored.
Symbolic links are refused (a link could point at the solutions), and only regular files are
read (a FIFO or a device would block or never end). A file that is missing, too large or not
UTF-8 text is recorded as a problem that costs only the questions depending on it.

Every step is bounded before it starts: a folder is listed up to ``MAX_ENTRIES`` names, and a
zip's entry count and central-directory size are read from its end record (``_zip_directory``)
before ``zipfile`` reads the directory itself. A submission that cannot be graded as it is (not
a zip, too many entries, two entries of the same name) is *refused*: nothing in it is graded and
the reason is its note.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mha_check.folder import (
    IGNORED_DIRS,
    MAX_FILE_BYTES,
    SEVERAL_FOLDERS,
    choose_folder,
    read_regular,
    several_folders,
)
from mha_check.questions import STUDENT_FILES

MAX_ENTRIES = 2000  # zip entries, or names listed in a folder and its sub-folders
MAX_ZIP_DIRECTORY = 1 << 20  # central directory bytes: room for MAX_ENTRIES long paths
MAX_ZIP_TOTAL = 32 << 20  # bytes of all members we agree to look at, uncompressed
MAX_ZIP_MEMBERS = MAX_ENTRIES  # the name other modules know


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
    refused: str = ""  # why nothing in it can be graded (then it is also the first note)

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


def _refuse(sub: Submission, why: str) -> Submission:
    sub.refused = why
    sub.notes.append(f"{why}; nothing was graded. Fix it and submit again.")
    sub.files.clear()
    return _finish(sub)


def _finish(sub: Submission) -> Submission:
    for name in STUDENT_FILES:
        if name not in sub.files and name not in sub.problems:
            sub.problems[name] = Problem("missing", f"{name} is missing from the submission")
    return sub


def _listing(path: str, budget: list[int]) -> list[os.DirEntry] | None:
    """The entries of a folder, or None once more than the budget of names has been seen."""
    out = []
    with os.scandir(path) as it:
        for entry in it:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            out.append(entry)
    return out


def _read_regular(path: Path, name: str, sub: Submission) -> None:
    """Read one file by the rule mha-check applies too (``read_regular``: no link, nothing but
    a regular file, never waiting on a FIFO); a file gone since it was listed is unreadable."""
    data, problem = read_regular(path, name)
    if data is None:
        why = problem or f"{name} could not be read (a symbolic link is not accepted)"
        sub.problems[name] = Problem("unreadable", why)
        return
    _decode(name, data, sub)


def load_folder(path: Path, student: str | None = None) -> Submission:
    sub = Submission(student or student_id(path), str(path))
    budget = [MAX_ENTRIES]
    too_many = f"the folder holds more than {MAX_ENTRIES} files and folders"
    top = _listing(str(path), budget)
    if top is None:
        return _refuse(sub, too_many)
    candidates: dict[str, set[str]] = {"": set()}
    for entry in top:
        if entry.name in STUDENT_FILES:
            candidates[""].add(entry.name)
        elif entry.is_dir(follow_symlinks=False) and entry.name not in IGNORED_DIRS:
            inner = _listing(entry.path, budget)
            if inner is None:
                return _refuse(sub, too_many)
            candidates[entry.name] = {e.name for e in inner if e.name in STUDENT_FILES}
    folder = choose_folder(candidates)
    if folder is None:
        if several_folders(candidates):
            sub.notes.append(f"{SEVERAL_FOLDERS}; nothing graded")
        return _finish(sub)
    base = Path(path, folder)
    for name in sorted(candidates[folder]):
        _read_regular(base / name, name, sub)
    return _finish(sub)


def _safe_member(name: str) -> PurePosixPath | None:
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or ".." in p.parts or not p.parts or re.match(r"^[A-Za-z]:", name):
        return None
    return p


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def _zip_directory(f) -> tuple[int, int] | None:
    """(declared entry count, central directory size) from a zip's end records, read from the
    last 64 KB of the file; None when there is no end record (not a zip)."""
    size = f.seek(0, os.SEEK_END)
    tail_len = min(size, _EOCD.size + 0xFFFF)  # the record, then at most a 64 KB comment
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        return None
    _, _, _, _, entries, cd_size, _, _ = _EOCD.unpack_from(tail, at)
    if entries == 0xFFFF or cd_size == 0xFFFFFFFF:  # ZIP64: the real numbers are elsewhere
        loc = at - _ZIP64_LOCATOR.size
        if loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
            return None
        offset = _ZIP64_LOCATOR.unpack_from(tail, loc)[2]
        if offset > size - _ZIP64_EOCD.size:
            return None
        f.seek(offset)
        record = f.read(_ZIP64_EOCD.size)
        if record[:4] != b"PK\x06\x06":
            return None
        fields = _ZIP64_EOCD.unpack(record)
        entries, cd_size = fields[7], fields[8]
    return entries, cd_size


def _open_zip(path: Path, sub: Submission) -> zipfile.ZipFile | None:
    """The zip, opened only after its end record promises a directory of a bounded size."""
    try:
        f = open(path, "rb")
    except OSError as e:
        _refuse(sub, f"the zip file could not be opened ({e.strerror or e})")
        return None
    try:
        declared = _zip_directory(f)
        if declared is None:
            _refuse(sub, "the file is not a valid zip archive")
        elif declared[0] > MAX_ENTRIES or declared[1] > MAX_ZIP_DIRECTORY:
            _refuse(sub, f"the zip holds more than {MAX_ENTRIES} entries")
        else:
            f.seek(0)
            return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        _refuse(sub, "the file is not a valid zip archive")
    f.close()
    return None


def load_zip(path: Path, student: str | None = None) -> Submission:
    sub = Submission(student or student_id(path), str(path))
    zf = _open_zip(path, sub)
    if zf is None:
        return sub
    with zf, zf.fp:
        infos = zf.infolist()
        if len(infos) > MAX_ENTRIES:  # the end record undercounted
            return _refuse(sub, f"the zip holds more than {MAX_ENTRIES} entries")
        candidates: dict[str, dict[str, zipfile.ZipInfo]] = {"": {}}
        skipped = 0
        seen: set[PurePosixPath] = set()
        for info in infos:
            p = _safe_member(info.filename)
            if p is None:
                skipped += 1
                continue
            if p in seen:  # which one would a person unzipping it get? Neither is guessed.
                return _refuse(sub, f"the zip holds two entries named {p.as_posix()!r}")
            seen.add(p)
            if info.is_dir() or p.name not in STUDENT_FILES or len(p.parts) > 2:
                continue
            if len(p.parts) == 2 and p.parts[0] in IGNORED_DIRS:
                continue
            folder = p.parts[0] if len(p.parts) == 2 else ""
            candidates.setdefault(folder, {})[p.name] = info
        if skipped:
            sub.notes.append(f"{skipped} zip entries with absolute or '..' paths were ignored")
        found = {d: set(m) for d, m in candidates.items()}
        folder = choose_folder(found)
        if folder is None:
            if several_folders(found):
                sub.notes.append(f"{SEVERAL_FOLDERS}; nothing graded")
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


def load_submission(path: str | os.PathLike, student: str | None = None) -> Submission:
    """A folder or ``.zip`` as a Submission (its id ``student``, by default from its name);
    never raises for a student's mistake."""
    path = Path(path)
    if path.is_dir():
        return load_folder(path, student)
    if path.is_file() and path.suffix.lower() == ".zip":
        return load_zip(path, student)
    raise FileNotFoundError(f"{path}: not a submission folder or .zip file")
