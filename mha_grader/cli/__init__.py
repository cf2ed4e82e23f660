"""``mha-grade``: the instructor's command line (docs/contract.md §4).

Each command is a module of this package, imported here by name, with ``HELP``,
``add_arguments(parser)`` and ``main(args) -> int``; ``main`` below delegates to it. The command
modules import only what their options need: a grading command's work (``runs/``, the sandbox)
is imported when it runs, after the platform is known to be Linux.
"""

from __future__ import annotations

import argparse
import logging
import sys
from types import ModuleType

from .. import paths
from . import batch, bundle, export, gradescope, merge, one, review

COMMANDS: dict[str, ModuleType] = {
    "one": one,
    "batch": batch,
    "merge": merge,
    "export": export,
    "review": review,
    "bundle": bundle,
    "gradescope": gradescope,
}

# Commands that run student code, in a sandbox only Linux provides; the others (hand-outs,
# reports) work anywhere.
GRADING_COMMANDS = ("one", "batch")
NEEDS_LINUX = (
    "grading needs Linux (it runs each student's code in a sandbox built from Linux kernel "
    "features): use a Linux machine, WSL 2 on Windows, or a Linux container such as Docker's "
    "python:3.12 image (docs/instructors.md); building the hand-outs works here."
)


def grading_on_this_platform(argv: list[str]) -> str | None:
    """Why the command in ``argv`` cannot run here (one line), or None."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in GRADING_COMMANDS and not sys.platform.startswith("linux"):
        return f"mha-grade {command}: {NEEDS_LINUX}"
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mha-grade",
        description="Grade the multi-head attention exercises: one submission or a whole "
        "class, in a sandbox (in shards, merged); review what it flagged; export grades to "
        "an LMS; or build the student bundle and a Gradescope autograder.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.add_arguments(sub.add_parser(name, help=command.HELP, description=command.HELP))
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="mha-grade: %(levelname)s: %(message)s")
    refusal = grading_on_this_platform(sys.argv[1:] if argv is None else argv)
    if refusal:  # before importing what only Linux has
        print(refusal, file=sys.stderr)
        return 2
    paths.ensure_solutions_importable()
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command].main(args)
    except ModuleNotFoundError as e:
        # A package the command needs is not installed: name it (a module of ours that is
        # missing or broken is a bug, and goes through as itself).
        if e.name and not e.name.startswith(("mha_grader", "mha_check", "solutions")):
            package = e.name.split(".")[0]
            print(
                f"mha-grade {args.command}: needs the Python package {package!r}, which is not "
                "installed here (pip install -e . installs what the grader needs)",
                file=sys.stderr,
            )
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
