"""``mha-grade merge OUT_1 ... OUT_N -o OUT``: join a class's shards (docs/contract.md §4)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..outcomes import Status
from ..outputs.folder import OutputFolder
from ..runs.merge import PARTIAL, MergeError, merge, partial_notice
from .common import fail, waiting_for_review

HELP = "join the outputs of sharded batches into one grade sheet and summary"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shards", type=Path, nargs="+", metavar="OUT_I", help="a shard's output folder")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder for the class")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="when a shard is missing or did not finish, merge the shards that finished instead "
        f"of refusing: their students only, the rest listed (exit status {PARTIAL})",
    )


def main(args: argparse.Namespace) -> int:
    out = OutputFolder(args.out)
    try:
        rows, merged = merge(args.shards, out, args.allow_partial)
    except MergeError as e:
        return fail("merge", e)
    for part in merged["merged_from"]:
        print(f"{part['folder']}: shard {part['shard'] or '-'}, containment layer {part['layer']}")
    print(f"{len(rows)} students from {len(merged['merged_from'])} folders")
    print(f"grade sheet: {out.grades_csv}")
    print(f"summary: {out.summary_md}")
    waiting = waiting_for_review(rows, args.out)
    if waiting:
        print(waiting)
    print(f"similar submissions: {out.similarity_html}")
    failed = [r["student"] for r in rows if r.get("status") == Status.GRADER_ERROR]
    if failed:
        print(f"the grader failed on: {', '.join(failed)}", file=sys.stderr)
    if merged.get("incomplete"):
        print(partial_notice(merged["incomplete"]), file=sys.stderr)
        return PARTIAL
    return 1 if failed else 0
