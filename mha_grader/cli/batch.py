"""``mha-grade batch SUBMISSIONS -o OUT``: grade a whole class, resumable (docs/contract.md §4)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from ..outputs.folder import OutputFolder
from ..review import decisions
from ..runs import shards
from ..sandbox.layers import LayerUnavailable, Limits
from .common import (
    add_call_timeout_argument,
    add_sandbox_arguments,
    cannot_grade,
    fail,
    report_layer,
    waiting_for_review,
)

HELP = "grade every submission in a folder, in parallel and resumable"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("submissions", type=Path, help="folder of submissions (sub-folders and .zip)")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    p.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel graders (cores)"
    )
    p.add_argument("--regrade", action="store_true", help="grade everything again")
    add_call_timeout_argument(p)
    p.add_argument(
        "--shard",
        metavar="I/N|auto",
        help="grade only the I-th of N stable parts of the class (by a hash of the student id), "
        "for a job array; 'auto' reads the part from Slurm (SLURM_ARRAY_TASK_ID, _MIN, _COUNT) "
        f"or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX and {shards.COUNT_VARIABLE}). "
        "Join the parts with mha-grade merge.",
    )
    add_sandbox_arguments(p)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(args: argparse.Namespace) -> int:
    from ..runs.batch import run_batch_grading  # the grading machinery: Linux only (cli.main)

    if not args.submissions.is_dir():
        return fail("batch", f"{args.submissions} is not a folder")
    try:
        shard = shards.parse(args.shard) if args.shard else None
    except shards.ShardError as e:
        return fail("batch", e)
    out = OutputFolder(args.out)
    try:  # checked before grading: a broken file must not wait for the end of a long run
        decisions.load(out)
    except decisions.ReviewsError as e:
        return fail("batch", f"{e}; fix or remove it, then run again")
    start = time.perf_counter()
    signal.signal(signal.SIGTERM, _interrupt)  # a kill ends like Ctrl-C: the sheet is written
    try:
        result = run_batch_grading(
            args.submissions,
            out,
            args.jobs,
            args.regrade,
            show_progress=sys.stderr.isatty(),
            limits=Limits(call_timeout=args.call_timeout),
            shard=shard,
            require=args.require_sandbox,
            on_layer=report_layer,
        )
    except LayerUnavailable as e:
        return cannot_grade("batch", e)
    except KeyboardInterrupt:
        print(
            "\nmha-grade batch: interrupted; what was graded is saved. Run the same command "
            "again to resume.",
            file=sys.stderr,
        )
        return 130
    seconds = time.perf_counter() - start
    print(
        f"graded {result.graded}, unchanged {result.skipped} "
        f"({len(result.rows)} students) in {seconds:.1f} s"
    )
    print(f"grade sheet: {out.grades_csv}")
    print(f"summary: {out.summary_md}")
    print(f"feedback: {out.feedback_pattern()}")
    waiting = waiting_for_review(result.rows, args.out)
    if waiting:
        print(waiting)
    if shard is None:
        print(f"similar submissions: {out.similarity_html}")
    else:
        print(f"shard {shard} done; join the shards with: mha-grade merge OUT_1 ... OUT_N -o OUT")
    if result.failed:
        print(f"the grader failed on: {', '.join(result.failed)}", file=sys.stderr)
        return 1
    return 0
