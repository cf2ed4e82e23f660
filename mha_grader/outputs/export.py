"""Grades into an LMS: ``mha-grade export OUT --lms canvas|moodle|blackboard --roster ROSTER.csv
-o FILE.csv [--assignment NAME] [--missing-as-zero]``.

The roster is the LMS's own gradebook export. Each submission's id is matched against the
roster's login, SIS id, LMS id and email columns, in that order, through the same id rule as
submission names (``submission.safe_id``, case ignored); a match must be unique. The file
written follows that LMS's import format (see ``Lms`` below): the roster's identity columns
first, in the roster's order, then one column with the assignment's total.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..grading.submission import safe_id
from ..outcomes import Status
from .reports import spreadsheet_safe

DEFAULT_ASSIGNMENT = "Multi-head attention"
ROLES = ("login", "SIS id", "LMS id", "email")  # the order ids are matched in


@dataclass(frozen=True)
class Lms:
    name: str
    identity: tuple[str, ...]  # columns copied from the roster (in the roster's order)
    keys: dict[str, tuple[str, ...]]  # role -> roster columns holding it
    required: tuple[str, ...]  # at least one of these must be in the roster
    existing: str  # regex (NAME inserted) of the header of an assignment column that exists
    points_row: bool = False  # Canvas: a "Points Possible" row under the header
    quote_all: bool = False
    notes: list[str] = field(default_factory=list)


# Canvas: the gradebook export's student columns; an assignment column "Title (id)" updates that
# assignment, a new title creates one; the row "    Points Possible" sets its points.
CANVAS = Lms(
    "Canvas",
    identity=(
        "Student",
        "LastName",
        "FirstName",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Integration ID",
        "Root Account",
        "Section",
    ),
    keys={
        "login": ("SIS Login ID",),
        "SIS id": ("SIS User ID",),
        "LMS id": ("ID",),
        "email": ("Email",),
    },
    required=("ID", "SIS User ID", "SIS Login ID"),
    existing=r"{name} \(\d+\)",
    points_row=True,
)
# Moodle: the grade export's user columns; on import the teacher maps one of them to a user
# field ("Email address" -> useremail, "ID number" -> useridnumber) and the score column to a
# grade item. Emails are compared case-sensitively by Moodle, so they are copied as they are.
MOODLE = Lms(
    "Moodle",
    identity=(
        "First name",
        "Last name",
        "ID number",
        "Institution",
        "Department",
        "Email address",
        "Username",
    ),
    keys={
        "login": ("Username",),
        "SIS id": ("ID number",),
        "LMS id": (),
        "email": ("Email address",),
    },
    required=("Email address", "ID number", "Username"),
    existing=r"(?:.*: )?{name}(?: \(Real\))?",
    notes=[
        "Moodle: in Grades > Import > CSV file, map 'Email address' to useremail (or 'ID number' "
        "to useridnumber) and the score column to a grade item whose maximum grade is {points}."
    ],
)
# Blackboard Learn, Original course view (Grade Center > Work Offline > Upload): students are
# identified by Username (rows without one are rejected); a column whose header ends in
# "|<column id>" updates that column, any other header creates a new one; comma-separated
# files must have every cell in quotes.
BLACKBOARD = Lms(
    "Blackboard (Original Grade Center)",
    identity=("Last Name", "First Name", "Username", "Student ID"),
    keys={"login": ("Username",), "SIS id": ("Student ID",), "LMS id": (), "email": ("Email",)},
    required=("Username",),
    existing=r"{name} \[.*\] \|\d+",
    quote_all=True,
    notes=[
        "Blackboard creates a new column from an upload as a text column with 0 points "
        "possible: edit the column to a score of {points} points after uploading."
    ],
)
SYSTEMS = {"canvas": CANVAS, "moodle": MOODLE, "blackboard": BLACKBOARD}


class ExportError(Exception):
    """A roster or grade sheet the export cannot use; the message says what is wrong."""


@dataclass
class Export:
    text: str  # the CSV file
    header: list[str]
    unmatched: list[str] = field(default_factory=list)  # submissions without a roster row
    ambiguous: list[str] = field(default_factory=list)  # messages
    missing: list[str] = field(default_factory=list)  # roster students without a submission
    grader_errors: list[str] = field(default_factory=list)
    needs_review: list[str] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)  # roster rows the LMS cannot identify
    exported: int = 0  # scores written


def read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ExportError(f"{path}: cannot read the roster ({e.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")  # an old spreadsheet's default
    sample = text[:4096]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    rows = [r for r in reader if any(c.strip() for c in r)]
    if not rows:
        raise ExportError(f"{path}: the roster is empty")
    header = [h.strip() for h in rows[0]]
    records = [dict(zip(header, [c.strip() for c in r], strict=False)) for r in rows[1:]]
    return header, records


def _is_student(lms: Lms, record: dict[str, str]) -> bool:
    first = next(iter(record.values()), "")
    if lms is CANVAS:
        # Canvas's export adds a "Points Possible" row, sometimes a "Manual Posting" row (no
        # student id) and its Student View user "Student, Test".
        if first.strip().lower() in ("points possible", "student, test"):
            return False
        return any(record.get(c) for c in ("ID", "SIS User ID", "SIS Login ID"))
    return any(record.get(c) for c in lms.identity)


def _column(header: list[str], wanted: str) -> str | None:
    for h in header:
        if h.lower() == wanted.lower():
            return h
    return None


def _keys(lms: Lms, header: list[str], record: dict[str, str]) -> list[tuple[int, str]]:
    """(rank, key) pairs a submission id can match this row by; lower ranks are tried first."""
    keys = []
    for rank, role in enumerate(ROLES):
        for wanted in lms.keys[role]:
            col = _column(header, wanted)
            value = record.get(col, "") if col else ""
            if value:
                keys.append((2 * rank, safe_id(value).casefold()))
                if role == "email" and "@" in value:  # the part before @, after the full address
                    keys.append((2 * rank + 1, safe_id(value.split("@")[0]).casefold()))
    return keys


def build_export(
    rows: list[dict[str, str]],
    header: list[str],
    roster: list[dict[str, str]],
    lms: Lms,
    assignment: str = DEFAULT_ASSIGNMENT,
    missing_as_zero: bool = False,
) -> Export:
    if not any(_column(header, c) for c in lms.required):
        raise ExportError(
            f"the roster is not a {lms.name} gradebook export: it has none of the columns "
            f"{', '.join(lms.required)} (its columns: {', '.join(header) or 'none'})"
        )
    students = [r for r in roster if _is_student(lms, r)]
    index: dict[tuple[int, str], list[int]] = {}
    for i, record in enumerate(students):
        for key in set(_keys(lms, header, record)):
            index.setdefault(key, []).append(i)
    ranks = sorted({rank for rank, _ in index})

    result = Export("", [])
    score: dict[int, str] = {}
    claimed: dict[int, str] = {}
    for row in rows:
        sid = row.get("student", "")
        key = safe_id(sid).casefold()
        found = None
        for rank in ranks:
            hits = index.get((rank, key), [])
            if len(hits) == 1:
                found = hits[0]
                break
            if len(hits) > 1:
                result.ambiguous.append(f"{sid} matches {len(hits)} roster rows")
                found = -1
                break
        if found is None:
            result.unmatched.append(sid)
            continue
        if found < 0:
            continue
        if found in claimed:
            result.ambiguous.append(f"{sid} and {claimed[found]} match the same roster row")
            score.pop(found, None)
            continue
        claimed[found] = sid
        # A grader error leaves questions ungraded until a person decides them (mha-grade
        # review): only then is the total a grade.
        if row.get("status") == Status.GRADER_ERROR and row.get("needs_review") != "false":
            result.grader_errors.append(sid)
            continue
        if row.get("needs_review") == "true":
            result.needs_review.append(sid)
        score[found] = row.get("total", "")

    identity = [h for h in header if any(h.lower() == c.lower() for c in lms.identity)]
    existing = re.compile(lms.existing.format(name=re.escape(assignment)), re.IGNORECASE)
    column = next((h for h in header if existing.fullmatch(h)), assignment)
    result.header = [*identity, column]
    max_total = next((r.get("max_total") for r in rows if r.get("max_total")), "")

    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL if lms.quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(result.header)
    if lms.points_row:
        writer.writerow(["    Points Possible", *[""] * (len(identity) - 1), max_total])
    for i, record in enumerate(students):
        if lms is BLACKBOARD and not record.get(_column(header, "Username") or ""):
            result.unusable.append(_describe(record))
        cell = score.get(i)
        if cell is None:
            if i not in claimed:
                result.missing.append(_describe(record))
            cell = "0" if missing_as_zero and i not in claimed else ""
        writer.writerow([*(spreadsheet_safe(record.get(h, "")) for h in identity), cell])
    result.text = buf.getvalue()
    result.exported = len(score)
    return result


def _describe(record: dict[str, str]) -> str:
    values = [v for v in record.values() if v]
    return " / ".join(values[:3]) or "(an empty row)"
