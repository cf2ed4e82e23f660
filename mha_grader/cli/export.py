"""``mha-grade export OUT --lms canvas|moodle|blackboard --roster ROSTER.csv -o FILE.csv``: the
grades in an LMS's import format (docs/contract.md §4)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..outputs.export import DEFAULT_ASSIGNMENT, SYSTEMS, ExportError, build_export, read_roster
from ..outputs.folder import OutputFolder, write_atomic

HELP = "write the grade sheet in the import format of Canvas, Moodle or Blackboard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="a grading output folder (holding grades.csv)")
    p.add_argument("--lms", required=True, choices=sorted(SYSTEMS), help="the LMS to import into")
    p.add_argument(
        "--roster", type=Path, required=True, help="the LMS's gradebook export (CSV) of the class"
    )
    p.add_argument("-o", "--output", type=Path, required=True, help="the CSV file to write")
    p.add_argument(
        "--assignment",
        default=DEFAULT_ASSIGNMENT,
        help="the assignment's name in the LMS (default: %(default)s); an existing column of the "
        "roster with that name is updated",
    )
    p.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="give 0 to roster students without a submission (default: leave their cell empty)",
    )


def main(args: argparse.Namespace) -> int:
    lms = SYSTEMS[args.lms]
    rows = OutputFolder(args.out).read_grades()
    if not rows:
        print(f"mha-grade export: {args.out}: no grades.csv with any student", file=sys.stderr)
        return 2
    try:
        header, roster = read_roster(args.roster)
        result = build_export(rows, header, roster, lms, args.assignment, args.missing_as_zero)
    except ExportError as e:
        print(f"mha-grade export: {e}", file=sys.stderr)
        return 2
    write_atomic(args.output, result.text)
    print(f"{args.output}: {result.exported} scores for {lms.name}, column '{result.header[-1]}'")
    if result.missing:
        n = len(result.missing)
        fill = "0" if args.missing_as_zero else ("an empty cell" if n == 1 else "empty cells")
        who = "roster student" if n == 1 else "roster students"
        print(f"{n} {who} without a submission got {fill}: " + "; ".join(result.missing))
    if result.needs_review:
        print(
            "exported, but a person should read their flagged written answers: "
            + ", ".join(result.needs_review)
        )
    max_total = next((r.get("max_total") for r in rows if r.get("max_total")), "?")
    for note in lms.notes:
        print(note.format(points=max_total))
    if result.grader_errors:
        print(
            "left empty (the grader failed on them: grade them again, or decide what it could "
            "not grade with mha-grade review): " + ", ".join(result.grader_errors),
            file=sys.stderr,
        )
    if result.unusable:
        print(
            "roster rows without a Username, which Blackboard cannot import: "
            + "; ".join(result.unusable),
            file=sys.stderr,
        )
    problems = result.unmatched or result.ambiguous
    if result.unmatched:
        print(
            "submissions without a roster row (their scores are not in the file): "
            + ", ".join(result.unmatched),
            file=sys.stderr,
        )
    for message in result.ambiguous:
        print(f"not exported: {message}", file=sys.stderr)
    return 1 if problems else 0
