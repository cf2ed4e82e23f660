"""Join shards: ``mha-grade merge OUT_1 ... OUT_N -o OUT``.

Each ``OUT_i`` is what ``mha-grade batch --shard I/N`` wrote. The merge refuses shards graded by
different graders (hidden tests, rubrics, points or reference solutions: the fingerprint in each
``batch.json``), an incomplete or inconsistent set of shards, a shard whose run did not finish,
and a student graded in two places. It then copies every student's reports, writes one
``grades.csv`` (the same as one batch of the whole class would), compares the whole class's code
and writes the summary. Each shard's containment layer is kept in ``OUT/batch.json``.

A missing or unfinished shard is named and the merge refused, unless ``--allow-partial``: then
the shards that finished are merged, what was left out is listed (stderr, ``batch.json``'s
``incomplete``, the summary) and the exit status is 3.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from . import report, reviews, runinfo
from .batch import GRADER_FAILED, compare_class, settle_reviews
from .submission import safe_id

MERGE_HELP = "join the outputs of sharded batches into one grade sheet and summary"
PARTIAL = 3  # exit status of a merge that left out a missing or unfinished shard
RERUN_HINT = (
    "Run those shards again (the same command resumes where it stopped; for a Slurm job "
    "array, submit the same array again: the finished tasks stop at once), then merge"
)


class MergeError(Exception):
    """Shards that cannot be joined; the message says why and what to do."""


def add_merge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shards", type=Path, nargs="+", metavar="OUT_I", help="a shard's output folder")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder for the class")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="when a shard is missing or did not finish, merge the shards that finished instead "
        f"of refusing: their students only, the rest listed (exit status {PARTIAL})",
    )


def check_shards(
    folders: list[Path], allow_partial: bool = False
) -> tuple[dict[Path, dict], list[str]]:
    """The batch.json of each folder to merge, once every rule for joining them holds, and
    what keeps them from being the whole class (`shard_gaps`): refused unless `allow_partial`,
    which merges only the finished runs."""
    entries: list[tuple[Path, dict]] = []
    for folder in folders:
        run = runinfo.read_run(folder)
        if run is None or "fingerprint" not in run:
            raise MergeError(
                f"{folder}: no batch.json: not the output of mha-grade batch, or its run stopped "
                "before grading began. Run that shard again, or leave the folder out."
            )
        entries.append((folder, run))
    _check_entries(entries)
    gaps = shard_gaps(entries)
    if gaps and not allow_partial:
        raise MergeError(
            "not one whole, finished class:\n"
            + "".join(f"  {g}\n" for g in gaps)
            + f"{RERUN_HINT}; or pass --allow-partial to merge the shards that finished."
        )
    finished = {folder: run for folder, run in entries if run.get("finished") is True}
    if not finished:
        raise MergeError(f"no run finished, nothing to merge: {'; '.join(gaps)}. {RERUN_HINT}.")
    return finished, gaps


def shard_gaps(runs: list[tuple[Path, dict]]) -> list[str]:
    """What keeps the runs from being one whole, finished class, a line each: the shards that
    no folder holds, and each run that did not finish (killed, cancelled, out of time, or still
    running: batch.json says "not finished" from the moment grading starts)."""
    gaps = []
    specs = [r["shard"] for _, r in runs if r.get("shard")]
    if specs:  # _check_entries made sure they are all I/N with one N
        count = int(specs[0].split("/")[1])
        have = {int(s.split("/")[0]) for s in specs}
        missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in have]
        if missing:
            them = "it" if len(missing) == 1 else "them"
            gaps.append(f"missing {', '.join(missing)}: no folder given holds {them}")
    for folder, run in runs:
        if run.get("finished") is not True:
            which = f"shard {run['shard']}" if run.get("shard") else "a whole batch"
            gaps.append(
                f"{folder} ({which}) did not finish: it was stopped (killed, cancelled, out of "
                "time) or is still running"
            )
    return gaps


def _check_entries(runs: list[tuple[Path, dict]]) -> None:
    prints = {run["fingerprint"] for _, run in runs}
    if len(prints) > 1:
        which = ", ".join(f"{f} ({r['fingerprint']})" for f, r in runs)
        raise MergeError(
            "the shards were graded with different hidden tests, rubrics, points or reference "
            f"solutions: {which}. Grade them again with the same grader (mha-grade batch ... "
            "--regrade --shard I/N) and merge then."
        )
    specs = [r.get("shard") for _, r in runs]
    if any(specs):
        if not all(specs):
            raise MergeError("some folders are shards (--shard) and some are whole batches")
        counts = {int(s.split("/")[1]) for s in specs}
        if len(counts) > 1:
            raise MergeError(f"the shards split the class differently: {', '.join(specs)}")
        (count,) = counts
        have = [int(s.split("/")[0]) for s in specs]
        twice = sorted({i for i in have if have.count(i) > 1})
        if twice:
            raise MergeError(
                "not one class: given twice " + ", ".join(f"{i}/{count}" for i in twice)
            )
    seen: dict[str, Path] = {}
    for folder, run in runs:
        for student in run.get("students", []):
            if not isinstance(student, str) or safe_id(student) != student:
                raise MergeError(
                    f"{folder}/batch.json names a student {student!r} that no batch does"
                )
            if student in seen:
                raise MergeError(f"{student} was graded in both {seen[student]} and {folder}")
            seen[student] = folder


def merge(
    folders: list[Path], out: Path, allow_partial: bool = False
) -> tuple[list[dict[str, str]], dict]:
    """Join the shards into `out`; returns the class's rows and the merged run record (whose
    ``incomplete`` lists what `allow_partial` left out)."""
    out = Path(out)
    resolved = {f.resolve() for f in folders}
    if out.resolve() in resolved:
        raise MergeError(f"{out}: the output folder must not be one of the shards")
    runs, gaps = check_shards(folders, allow_partial)
    out.mkdir(parents=True, exist_ok=True)
    try:  # decisions a person made on a shard's own output are kept
        reviews.gather(out, runs)
    except reviews.ReviewsError as e:
        raise MergeError(f"{e}; fix or remove it, then merge again") from None
    rows: dict[str, dict[str, str]] = {}
    sources: dict[str, dict[str, str]] = {}
    for folder, run in runs.items():
        students = set(run.get("students", []))
        for row in report.read_grades_csv(folder):
            if row.get("student") in students:
                rows[row["student"]] = row
        for student in students:
            src = report.student_dir(folder, student)
            if src.is_dir():
                shutil.copytree(src, report.student_dir(out, student), dirs_exist_ok=True)
        shard_sources = runinfo.read_sources(folder)
        sources.update({s: files for s, files in shard_sources.items() if s in students})
    missing = sorted(s for r in runs.values() for s in r.get("students", []) if s not in rows)
    if missing:
        raise MergeError(f"no grade-sheet row for {', '.join(missing)}: run their shard again")
    ordered = settle_reviews(out, [rows[s] for s in sorted(rows)], "merge")
    report.write_grades_csv(out, ordered)
    runinfo.write_sources(out, sources)
    compare_class(out, sources)
    first = next(iter(runs.values()))
    merged = {
        "fingerprint": first["fingerprint"],
        "shard": None,
        "students": sorted(rows),
        "finished": not gaps,
        "grader_errors": sorted(e for r in runs.values() for e in r.get("grader_errors", [])),
        "layer": runinfo.containment_layer(out, sorted(rows)),
        "merged_from": [
            {"folder": str(f), "shard": r.get("shard"), "layer": r.get("layer", "unknown")}
            for f, r in runs.items()
        ],
    }
    if gaps:
        merged["incomplete"] = gaps
    runinfo.write_run(out, merged)
    from .summary import build_summary

    build_summary(out)
    return ordered, merged


def run_merge(args: argparse.Namespace) -> int:
    try:
        rows, merged = merge(args.shards, args.out, args.allow_partial)
    except MergeError as e:
        print(f"mha-grade merge: {e}", file=sys.stderr)
        return 2
    for part in merged["merged_from"]:
        print(f"{part['folder']}: shard {part['shard'] or '-'}, containment layer {part['layer']}")
    print(f"{len(rows)} students from {len(merged['merged_from'])} folders")
    print(f"grade sheet: {args.out / 'grades.csv'}")
    print(f"summary: {args.out / 'summary.md'}")
    print(f"similar submissions: {args.out / 'similarity.html'}")
    failed = [r["student"] for r in rows if r.get("status") == GRADER_FAILED]
    if failed:
        print(f"the grader failed on: {', '.join(failed)}", file=sys.stderr)
    if merged.get("incomplete"):
        print(partial_notice(merged["incomplete"]), file=sys.stderr)
        return PARTIAL
    return 1 if failed else 0


def partial_notice(gaps: list[str]) -> str:
    """What an instructor reads after ``--allow-partial`` left something out."""
    left_out = "".join(f"  {g}\n" for g in gaps)
    return (
        "mha-grade merge: a partial grade sheet (--allow-partial): the students of these "
        f"shards are not in it:\n{left_out}{RERUN_HINT} again for the whole class."
    )
