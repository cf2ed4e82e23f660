"""``mha-grade review OUT``: a person's decisions on what the grader flagged, or on any question
a student asks to have regraded.

- ``mha-grade review OUT``: the terminal queue (``review_queue.py``), worst first;
- ``mha-grade review OUT --set STUDENT QUESTION SCORE [--note TEXT]``: one decision;
- ``mha-grade review OUT --clear STUDENT QUESTION``: back to the grader's score;
- ``mha-grade review OUT --list [--all] [--csv]``: what is still open (or everything).

Decisions live in ``OUT/reviews.toml`` (``reviews.py``) and reach the reports at once
(``reviewed.py``); the items come from ``review_items.py``.
"""

from __future__ import annotations

import argparse
import csv
import getpass
import io
import os
import sys
from pathlib import Path

from . import report, reviewed, reviews
from .questions import POINTS, QUESTION_IDS
from .review_items import Item, items
from .submission import safe_id

REVIEW_HELP = "review flagged answers (a terminal queue), or set a score by hand"


def add_review_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, metavar="OUT", help="the output folder of a graded class")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--set",
        nargs=3,
        metavar=("STUDENT", "QUESTION", "SCORE"),
        help="decide one question of one student (any question, flagged or not: a regrade)",
    )
    what.add_argument(
        "--clear",
        nargs=2,
        metavar=("STUDENT", "QUESTION"),
        help="remove a decision: the grader's score stands again",
    )
    what.add_argument("--list", action="store_true", help="list what is still open, and exit")
    p.add_argument("--note", default="", help="with --set: a note the student reads")
    p.add_argument(
        "--reviewer",
        default=os.environ.get("MHA_REVIEWER") or _login(),
        help="who decides, as recorded in reviews.toml (default: $MHA_REVIEWER, else your login)",
    )
    p.add_argument(
        "--all", action="store_true", help="decided items too (to list them, or to revise them)"
    )
    p.add_argument("--csv", action="store_true", help="with --list: CSV instead of text")
    p.add_argument(
        "--student",
        action="append",
        metavar="ID",
        help="only this student (repeatable); their questions that were not flagged are "
        "offered too, for a regrade request",
    )
    p.add_argument(
        "--question",
        action="append",
        metavar="QID",
        choices=QUESTION_IDS,
        help="only this question (repeatable): every student's answer to it, flagged or not "
        "(to go through one question of the whole class)",
    )


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return "unknown"


def parse_score(text: str, max_score: float) -> float:
    """A score as a person types it: ``3``, ``2.5``, ``2,5`` or ``3/4`` (out of the question's
    points). Raises ValueError with what was expected."""
    text = text.strip().replace(",", ".")
    expected = f"a number from 0 to {report.points(max_score)}"
    whole, _, over = text.partition("/")
    try:
        score = float(whole)
        if over and abs(float(over) - max_score) > 1e-9:
            raise ValueError(f"this question is out of {report.points(max_score)}, not {over}")
    except ValueError as e:
        if "out of" in str(e):
            raise
        raise ValueError(f"expected {expected}, not {text!r}") from None
    if not 0 <= score <= max_score:  # also refuses nan
        raise ValueError(f"expected {expected} (the question's points), not {text}")
    return score


def _student(out: Path, given: str) -> str:
    """The student id as the output folder has it (the folder's name works too)."""
    if report.student_dir(out, given).is_dir():
        return given
    return safe_id(given)


def run_set(args: argparse.Namespace) -> int:
    student, qid, given = args.set
    if qid not in POINTS:
        print(
            f"mha-grade review: {qid!r} is not a question id (one of: {', '.join(QUESTION_IDS)})",
            file=sys.stderr,
        )
        return 2
    try:
        score = parse_score(given, POINTS[qid])
    except ValueError as e:
        print(f"mha-grade review: {qid}: {e}", file=sys.stderr)
        return 2
    student = _student(args.out, student)
    try:
        decision, before, row = reviewed.record(
            args.out, student, qid, score, args.note, args.reviewer
        )
    except reviews.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    pts = report.points
    line = f"{student} {qid}: {pts(decision.score)} / {pts(POINTS[qid])} by {decision.reviewer}"
    line += f" (the grader gave {pts(decision.grader_score)})"
    if before is not None:
        line += f"; replaces {before.reviewer}'s {pts(before.score)} of {before.decided:%Y-%m-%d}"
    print(line)
    print(f"{student}'s total: {row['total']} / {row['max_total']}")
    _rebuild_summary(args.out)
    return 0


def run_clear(args: argparse.Namespace) -> int:
    student, qid = args.clear
    student = _student(args.out, student)
    try:
        _, before, row = reviewed.record(args.out, student, qid, None)
    except reviews.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    if before is None:
        print(f"{student} {qid}: no decision to remove; the grader's score stands")
    else:
        print(f"{student} {qid}: {before.reviewer}'s decision removed; the grader's score stands")
    print(f"{student}'s total: {row['total']} / {row['max_total']}")
    _rebuild_summary(args.out)
    return 0


def _rebuild_summary(out: Path) -> None:
    from .summary import build_summary

    build_summary(out, plots=(out / "plots").is_dir())


LIST_COLUMNS = (
    "student",
    "question",
    "kind",
    "grader_score",
    "max_score",
    "score",
    "reviewer",
    "decided",
    "note",
    "reason",
)


def list_items(found: list[Item], as_csv: bool) -> str:
    pts = report.points
    if as_csv:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(LIST_COLUMNS)
        for it in found:
            d = it.decision
            cells = [it.student, it.question, it.kind, pts(it.grader_score), pts(it.max_score)]
            cells += [pts(d.score), d.reviewer, d.decided.isoformat(), d.note] if d else [""] * 4
            cells.append(it.reason())
            writer.writerow([report.spreadsheet_safe(c) for c in cells])
        return buf.getvalue()
    open_items = [it for it in found if it.open]
    students = len({it.student for it in open_items})
    lines = [
        f"{len(open_items)} open ({students} students), {len(found) - len(open_items)} decided"
    ]
    if found:
        width = max(len(it.student) for it in found)
        for it in found:
            score = f"{pts(it.grader_score)}/{pts(it.max_score)}"
            if it.decision:
                score = f"{pts(it.decision.score)}/{pts(it.max_score)} (grader {score})"
            text = it.reason() if it.open else f"{it.decision.reviewer}: {it.decision.note}"
            lines.append(
                f"{it.student:<{width}}  {it.question:<20}  {it.kind:<12}  {score:<20}  "
                f"{' '.join(text.split())[:100]}"
            )
    return "\n".join(lines) + "\n"


def _check_out(out: Path) -> str | None:
    if not out.is_dir():
        return f"{out}: no such folder"
    if not reviewed.seal_students(out):
        return f"{out}: no graded students here (run mha-grade batch or one first)"
    return None


def run_review(args: argparse.Namespace) -> int:
    problem = _check_out(args.out)
    if problem:
        print(f"mha-grade review: {problem}", file=sys.stderr)
        return 2
    if args.note and not args.set:
        print("mha-grade review: --note goes with --set", file=sys.stderr)
        return 2
    if args.set:
        return run_set(args)
    if args.clear:
        return run_clear(args)
    students = [_student(args.out, s) for s in args.student] if args.student else None
    try:
        store = reviews.load(args.out)
        found = items(args.out, store, students, args.question, decided=args.all)
    except reviews.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    if not found and not any(
        reviewed.read_sealed(args.out, s) for s in reviewed.seal_students(args.out)
    ):
        print(
            f"mha-grade review: {args.out} was graded by an older grader, which did not keep "
            "what a review needs: grade the class again with --regrade, then review",
            file=sys.stderr,
        )
        return 2
    if args.list:
        sys.stdout.write(list_items(found, args.csv))
        return 0
    if not sys.stdin.isatty():
        print(
            "mha-grade review: the queue needs a terminal; without one use --list, and "
            "--set STUDENT QUESTION SCORE [--note TEXT]",
            file=sys.stderr,
        )
        return 2
    from .review_queue import Queue

    return Queue(args.out, found, args.reviewer).run()
