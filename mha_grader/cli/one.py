"""``mha-grade one SUBMISSION -o OUT``: grade one submission (docs/contract.md §4)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..outcomes import Status
from ..outputs.folder import OutputFolder
from ..sandbox.layers import LayerUnavailable, Limits
from .common import (
    add_call_timeout_argument,
    add_sandbox_arguments,
    cannot_grade,
    fail,
    report_layer,
)

HELP = "grade one submission against the hidden tests"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or .zip file")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    add_call_timeout_argument(p)
    add_sandbox_arguments(p)


def main(args: argparse.Namespace) -> int:
    from ..runs.one import grade_one  # the grading machinery: Linux only (see cli.main)

    if not (args.submission.is_dir() or args.submission.is_file()):
        return fail("one", f"{args.submission}: not a submission folder or .zip file")
    out = OutputFolder(args.out)
    try:
        grade, row = grade_one(
            args.submission,
            out,
            Limits(call_timeout=args.call_timeout),
            args.require_sandbox,
            on_layer=report_layer,
        )
    except LayerUnavailable as e:
        return cannot_grade("one", e)
    except FileNotFoundError as e:
        return fail("one", e)
    review = ", needs review" if row["needs_review"] == "true" else ""
    print(f"{grade.student}: {row['total']} / {row['max_total']} (status {row['status']}{review})")
    print(f"feedback: {out.feedback_md(grade.student)}")
    print(f"grade sheet: {out.grades_csv}")
    return 1 if grade.status == Status.GRADER_ERROR else 0
