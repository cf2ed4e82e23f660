"""Join shards: ``mha-grade merge OUT_1 ... OUT_N -o OUT``.

Each ``OUT_i`` is what ``mha-grade batch --shard I/N`` wrote. The merge refuses shards graded by
different graders (hidden tests, rubrics, points or reference solutions: the fingerprint in each
``batch.json``), an incomplete or inconsistent set of shards, a shard whose run did not finish,
and a student graded in two places. It then copies every student's reports, writes one
``grades.csv`` (the same as one batch of the whole class would), compares the whole class's code
and writes the summary. Each shard's containment layer is kept in ``OUT/batch.json``.
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


class MergeError(Exception):
    """Shards that cannot be joined; the message says why and what to do."""


def add_merge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("shards", type=Path, nargs="+", metavar="OUT_I", help="a shard's output folder")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder for the class")


def check_shards(folders: list[Path]) -> dict[Path, dict]:
    """Each folder's batch.json, once every rule for joining them holds."""
    entries: list[tuple[Path, dict]] = []
    for folder in folders:
        run = runinfo.read_run(folder)
        if run is None or "fingerprint" not in run:
            raise MergeError(f"{folder}: not the output of mha-grade batch (no batch.json)")
        entries.append((folder, run))
    _check_entries(entries)
    return dict(entries)


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
        missing = sorted(set(range(1, count + 1)) - set(have))
        twice = sorted({i for i in have if have.count(i) > 1})
        if missing or twice:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(f"{i}/{count}" for i in missing))
            if twice:
                parts.append("given twice " + ", ".join(f"{i}/{count}" for i in twice))
            raise MergeError(f"not one whole class: {'; '.join(parts)}")
    unfinished = [f"{f} ({r.get('shard') or 'batch'})" for f, r in runs if not r["finished"]]
    if unfinished:
        raise MergeError(
            f"these runs did not finish: {', '.join(unfinished)}. Run the same command again "
            "(it resumes where it stopped), then merge."
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


def merge(folders: list[Path], out: Path) -> tuple[list[dict[str, str]], dict]:
    """Join the shards into `out`; returns the class's rows and the merged run record."""
    out = Path(out)
    resolved = {f.resolve() for f in folders}
    if out.resolve() in resolved:
        raise MergeError(f"{out}: the output folder must not be one of the shards")
    runs = check_shards(folders)
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
        "finished": True,
        "grader_errors": sorted(e for r in runs.values() for e in r.get("grader_errors", [])),
        "layer": runinfo.containment_layer(out, sorted(rows)),
        "merged_from": [
            {"folder": str(f), "shard": r.get("shard"), "layer": r.get("layer", "unknown")}
            for f, r in runs.items()
        ],
    }
    runinfo.write_run(out, merged)
    from .summary import build_summary

    build_summary(out)
    return ordered, merged


def run_merge(args: argparse.Namespace) -> int:
    try:
        rows, merged = merge(args.shards, args.out)
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
        return 1
    return 0
