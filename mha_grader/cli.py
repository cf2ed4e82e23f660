"""``mha-grade``: the instructor's command line (docs/contract.md §4).

Subcommands are registered in ``COMMANDS``; each has an ``add_<name>_arguments(parser)`` and a
``run_<name>(args) -> int``. ``one`` lives here; ``batch``, ``bundle`` and ``gradescope`` are
added by their own modules in the same way.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from . import paths
from .sandbox import LAYERS, REQUIRE_ENV, LayerInfo, Limits


def add_sandbox_arguments(p: argparse.ArgumentParser) -> None:
    """--require-sandbox, shared by every command that grades."""
    p.add_argument(
        "--require-sandbox",
        choices=LAYERS,
        metavar="LAYER",
        help="refuse to grade unless student code can be contained at least this well: "
        f"{' > '.join(LAYERS)} (default: ${REQUIRE_ENV}, or the best this machine allows)",
    )


def report_layer(layer: LayerInfo) -> None:
    """Print the layer in force once, in one plain line (and any permission it had to fix)."""
    print(layer.describe(), flush=True)
    if layer.changes:
        print("sandbox: closed to student code (chmod): " + "; ".join(layer.changes), flush=True)


def cannot_grade(command: str, reason: object) -> int:
    """Nothing was graded (no sandbox, or none as strong as required): one line, exit 2."""
    print(f"mha-grade {command}: cannot grade: {reason}", file=sys.stderr)
    return 2


def add_one_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or .zip file")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    p.add_argument(
        "--call-timeout",
        type=float,
        default=Limits.call_timeout,
        help="wall-clock seconds allowed per call into the student's code (default: %(default)g)",
    )
    add_sandbox_arguments(p)


def run_one(args: argparse.Namespace) -> int:
    from . import report
    from .batch import grader_fingerprint, settle_reviews, submission_key, write_seal
    from .engine import Engine
    from .sandbox import LayerUnavailable
    from .submission import load_submission

    if not (args.submission.is_dir() or args.submission.is_file()):
        print(
            f"mha-grade one: {args.submission}: not a submission folder or .zip file",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        engine = Engine(
            Limits(call_timeout=args.call_timeout),
            require=args.require_sandbox,
            protect=(args.out, args.submission),
        )
        engine.start()  # it boots in the background while the submission is read
    except LayerUnavailable as e:
        return cannot_grade("one", e)
    report_layer(engine.layer)
    with engine:
        try:
            submission = load_submission(args.submission)
        except FileNotFoundError as e:
            print(f"mha-grade one: {e}", file=sys.stderr)
            return 2
        grade = engine.grade(submission)
    key = submission_key(submission, grader_fingerprint())
    row = write_seal(args.out, grade, key, submission)  # a later batch into OUT reuses it
    folder = report.student_dir(args.out, grade.student)
    # One output folder can collect several `one` runs: replace this student's row only.
    rows = [r for r in report.read_grades_csv(args.out) if r.get("student") != grade.student]
    rows = settle_reviews(args.out, [*rows, row], "one")  # a person's decisions still hold
    report.write_grades_csv(args.out, rows)
    row = next(r for r in rows if r.get("student") == grade.student)
    try:
        from .summary import build_summary

        build_summary(args.out, plots=False)
    except ImportError:
        pass
    review = ", needs review" if row["needs_review"] == "true" else ""
    print(f"{grade.student}: {row['total']} / {row['max_total']} (status {row['status']}{review})")
    print(f"feedback: {folder / 'feedback.md'}")
    print(f"grade sheet: {args.out / 'grades.csv'}")
    return 1 if grade.status == "grader-error" else 0


# Commands that run student code, in a sandbox only Linux provides; the others (hand-outs,
# reports) work anywhere.
GRADING_COMMANDS = ("one", "batch")
NEEDS_LINUX = (
    "grading needs Linux (it runs each student's code in a sandbox built from Linux kernel "
    "features): use a Linux machine, WSL 2 on Windows, or a Linux container such as Docker's "
    "python:3.12 image (see the README); building the hand-outs works here."
)


def grading_on_this_platform(argv: list[str]) -> str | None:
    """Why the command in ``argv`` cannot run here (one line), or None."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in GRADING_COMMANDS and not sys.platform.startswith("linux"):
        return f"mha-grade {command}: {NEEDS_LINUX}"
    return None


COMMANDS: dict[str, tuple[str, Callable, Callable]] = {
    "one": ("grade one submission against the hidden tests", add_one_arguments, run_one),
}


def _register_optional() -> None:
    """Subcommands whose modules other parts of the project provide, when present."""
    import importlib

    optional = (
        ("batch", "batch"),
        ("merge", "merge"),
        ("export", "export"),
        ("review", "review"),
        ("bundle", "handouts"),
        ("gradescope", "gradescope"),
    )
    for name, module in optional:
        if name in COMMANDS:
            continue
        try:
            mod = importlib.import_module(f"mha_grader.{module}")
        except ImportError:
            continue
        add = getattr(mod, f"add_{name}_arguments", None)
        run = getattr(mod, f"run_{name}", None)
        if add and run:
            help_text = getattr(mod, f"{name.upper()}_HELP", name)
            COMMANDS[name] = (help_text, add, run)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="mha-grade: %(levelname)s: %(message)s")
    refusal = grading_on_this_platform(sys.argv[1:] if argv is None else argv)
    if refusal:  # before importing what only Linux has
        print(refusal, file=sys.stderr)
        return 2
    paths.ensure_solutions_importable()
    _register_optional()
    parser = argparse.ArgumentParser(
        prog="mha-grade",
        description="Grade the multi-head attention exercises: one submission or a whole "
        "class, in a sandbox (in shards, merged); review what it flagged; export grades to "
        "an LMS; or build the "
        "student bundle and a Gradescope autograder.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add, _) in COMMANDS.items():
        add(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return COMMANDS[args.command][2](args)


if __name__ == "__main__":
    sys.exit(main())
