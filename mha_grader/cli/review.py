"""``mha-grade review OUT``: a person's decisions on what the grader flagged, or on any question
a student asks to have regraded.

- ``mha-grade review OUT``: the terminal queue (``review/queue.py``), worst first;
- ``mha-grade review OUT --set STUDENT QUESTION SCORE [--note TEXT]``: one decision;
- ``mha-grade review OUT --clear STUDENT QUESTION``: back to the grader's score;
- ``mha-grade review OUT --list [--all] [--csv]``: what is still open (or everything).

Decisions live in ``OUT/reviews.toml`` (``review/decisions.py``) and reach the reports at once
(``review/apply.py``); the items come from ``review/items.py``.
"""

from __future__ import annotations

import argparse
import csv
import getpass
import io
import os
import sys
from pathlib import Path

from mha_check.questions import QUESTION_IDS

from ..grading.submission import safe_id
from ..outputs import reports
from ..outputs.folder import OutputFolder
from ..outputs.summary import build_summary, reviews_counted
from ..points import POINTS
from ..review import apply, decisions
from ..review.decisions import parse_score
from ..review.items import CHANGED, REQUESTED, Item, items

HELP = "review flagged answers (a terminal queue), or set a score by hand"


def add_arguments(p: argparse.ArgumentParser) -> None:
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


def _student(out: OutputFolder, given: str) -> str:
    """The student id as the output folder has it (the folder's name works too)."""
    if out.has_student(given):
        return given
    return safe_id(given)


def run_set(args: argparse.Namespace, out: OutputFolder) -> int:
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
    student = _student(out, student)
    try:
        decision, before, row = apply.record(out, student, qid, score, args.note, args.reviewer)
    except decisions.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    pts = reports.points
    line = f"{student} {qid}: {pts(decision.score)} / {pts(POINTS[qid])} by {decision.reviewer}"
    line += f" (the grader gave {pts(decision.grader_score)})"
    if before is not None:
        line += f"; replaces {before.reviewer}'s {pts(before.score)} of {before.decided:%Y-%m-%d}"
    print(line)
    print(f"{student}'s total: {row['total']} / {row['max_total']}")
    _rebuild_summary(out)
    return 0


def run_clear(args: argparse.Namespace, out: OutputFolder) -> int:
    student, qid = args.clear
    student = _student(out, student)
    try:
        _, before, row = apply.record(out, student, qid, None)
    except decisions.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    if before is None:
        print(f"{student} {qid}: no decision to remove; the grader's score stands")
    else:
        print(f"{student} {qid}: {before.reviewer}'s decision removed; the grader's score stands")
    print(f"{student}'s total: {row['total']} / {row['max_total']}")
    _rebuild_summary(out)
    return 0


def _rebuild_summary(out: OutputFolder) -> None:
    build_summary(out, plots=out.plots.is_dir())


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


def counted(everything: list[Item]) -> str:
    """What ``--list`` says first, counted over every item of the class (decided ones too,
    whether or not they are listed) as ``summary.md`` counts them: open are the questions
    flagged for a person (or changed since a decision) that nobody has decided yet."""
    waiting = [it for it in everything if it.open and it.kind != REQUESTED]
    decided = sum(1 for it in everything if not it.open)
    reopened = sum(1 for it in waiting if it.kind == CHANGED)
    students = len({it.student for it in waiting})
    text = reviews_counted(len(waiting), decided, reopened)
    return text.replace(" open", f" open ({students} student{'s' if students != 1 else ''})", 1)


def list_items(found: list[Item], as_csv: bool, everything: list[Item] | None = None) -> str:
    """The items ``found`` as text (after a line that counts ``everything``: the class's open
    and decided items, ``found`` when not given) or as CSV."""
    pts = reports.points
    if as_csv:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(LIST_COLUMNS)
        for it in found:
            d = it.decision
            cells = [it.student, it.question, it.kind, pts(it.grader_score), pts(it.max_score)]
            cells += [pts(d.score), d.reviewer, d.decided.isoformat(), d.note] if d else [""] * 4
            cells.append(it.reason())
            writer.writerow([reports.spreadsheet_safe(c) for c in cells])
        return buf.getvalue()
    everything = found if everything is None else everything
    lines = [counted(everything)]
    hidden_decided = sum(1 for it in everything if not it.open) - sum(
        1 for it in found if not it.open
    )
    if hidden_decided:
        lines[0] += " (--all lists the decided ones too)"
    requested = sum(1 for it in found if it.kind == REQUESTED)
    if requested:
        lines[0] += f"; {requested} asked for, not flagged"
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


def _check_out(out: OutputFolder) -> str | None:
    if not out.root.is_dir():
        return f"{out.root}: no such folder"
    if not out.sealed_students():
        return f"{out.root}: no graded students here (run mha-grade batch or one first)"
    return None


def main(args: argparse.Namespace) -> int:
    out = OutputFolder(args.out)
    problem = _check_out(out)
    if problem:
        print(f"mha-grade review: {problem}", file=sys.stderr)
        return 2
    if args.note and not args.set:
        print("mha-grade review: --note goes with --set", file=sys.stderr)
        return 2
    if args.set:
        return run_set(args, out)
    if args.clear:
        return run_clear(args, out)
    students = [_student(out, s) for s in args.student] if args.student else None
    try:
        store = decisions.load(out)
        found = items(out, store, students, args.question, decided=args.all)
    except decisions.ReviewsError as e:
        print(f"mha-grade review: {e}", file=sys.stderr)
        return 2
    if not found and not any(apply.read_sealed(out, s) for s in out.sealed_students()):
        print(
            f"mha-grade review: {args.out} was graded by an older grader, which did not keep "
            "what a review needs: grade the class again with --regrade, then review",
            file=sys.stderr,
        )
        return 2
    if args.list:
        if args.csv:
            sys.stdout.write(list_items(found, as_csv=True))
            return 0
        # Counted as summary.md counts them: decided items too, listed or not (over the
        # students and questions asked for, when some are).
        try:
            everything = items(out, store, students, args.question, decided=True)
        except decisions.ReviewsError as e:
            print(f"mha-grade review: {e}", file=sys.stderr)
            return 2
        sys.stdout.write(list_items(found, as_csv=False, everything=everything))
        return 0
    if not sys.stdin.isatty():
        print(
            "mha-grade review: the queue needs a terminal; without one use --list, and "
            "--set STUDENT QUESTION SCORE [--note TEXT]",
            file=sys.stderr,
        )
        return 2
    from ..review.queue import Queue  # rich's terminal machinery: only for the queue

    return Queue(out, found, args.reviewer).run()
