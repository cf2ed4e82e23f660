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

from pathlib import Path

from ..grading.submission import safe_id
from ..outputs.containment import containment_layer
from ..outputs.folder import OutputFolder
from ..outputs.summary import build_summary
from ..review import decisions
from .record import compare_class, settle_reviews

PARTIAL = 3  # exit status of a merge that left out a missing or unfinished shard
RERUN_HINT = (
    "Run those shards again (the same command resumes where it stopped; for a Slurm job "
    "array, submit the same array again: the finished tasks stop at once), then merge"
)


class MergeError(Exception):
    """Shards that cannot be joined; the message says why and what to do."""


def check_shards(
    folders: list[Path], allow_partial: bool = False
) -> tuple[dict[Path, dict], list[str]]:
    """The batch.json of each folder to merge, once every rule for joining them holds, and
    what keeps them from being the whole class (`shard_gaps`): refused unless `allow_partial`,
    which merges only the finished runs."""
    entries: list[tuple[Path, dict]] = []
    for folder in folders:
        run = OutputFolder(folder).read_run()
        if run is None or "fingerprint" not in run:
            raise MergeError(
                f"{folder}: no {OutputFolder.RUN}: not the output of mha-grade batch, or its run "
                "stopped "
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
                    f"{OutputFolder(folder).run_json} names a student {student!r} that no "
                    "batch does"
                )
            if student in seen:
                raise MergeError(f"{student} was graded in both {seen[student]} and {folder}")
            seen[student] = folder


def merge(
    folders: list[Path], out: OutputFolder | Path, allow_partial: bool = False
) -> tuple[list[dict[str, str]], dict]:
    """Join the shards into `out`; returns the class's rows and the merged run record (whose
    ``incomplete`` lists what `allow_partial` left out)."""
    out = out if isinstance(out, OutputFolder) else OutputFolder(out)
    resolved = {f.resolve() for f in folders}
    if out.root.resolve() in resolved:
        raise MergeError(f"{out.root}: the output folder must not be one of the shards")
    runs, gaps = check_shards(folders, allow_partial)
    out.make()
    try:  # decisions a person made on a shard's own output are kept
        decisions.gather(out, runs)
    except decisions.ReviewsError as e:
        raise MergeError(f"{e}; fix or remove it, then merge again") from None
    rows: dict[str, dict[str, str]] = {}
    sources: dict[str, dict[str, str]] = {}
    for folder, run in runs.items():
        shard = OutputFolder(folder)
        students = set(run.get("students", []))
        for row in shard.read_grades():
            if row.get("student") in students:
                rows[row["student"]] = row
        for student in students:
            out.copy_student(shard, student)
        shard_sources = shard.read_sources()
        sources.update({s: files for s, files in shard_sources.items() if s in students})
    missing = sorted(s for r in runs.values() for s in r.get("students", []) if s not in rows)
    if missing:
        raise MergeError(f"no grade-sheet row for {', '.join(missing)}: run their shard again")
    ordered = settle_reviews(out, [rows[s] for s in sorted(rows)], "merge")
    out.write_grades(ordered)
    out.write_sources(sources)
    compare_class(out, sources)
    first = next(iter(runs.values()))
    merged = {
        "fingerprint": first["fingerprint"],
        "shard": None,
        "students": sorted(rows),
        "finished": not gaps,
        "grader_errors": sorted(e for r in runs.values() for e in r.get("grader_errors", [])),
        "layer": containment_layer(out, sorted(rows)),
        "merged_from": [
            {"folder": str(f), "shard": r.get("shard"), "layer": r.get("layer", "unknown")}
            for f, r in runs.items()
        ],
    }
    if gaps:
        merged["incomplete"] = gaps
    out.write_run(merged)
    build_summary(out)
    return ordered, merged


def partial_notice(gaps: list[str]) -> str:
    """What an instructor reads after ``--allow-partial`` left something out."""
    left_out = "".join(f"  {g}\n" for g in gaps)
    return (
        "mha-grade merge: a partial grade sheet (--allow-partial): the students of these "
        f"shards are not in it:\n{left_out}{RERUN_HINT} again for the whole class."
    )
