"""Grade a whole class: ``mha-grade batch SUBMISSIONS_DIR -o OUT [-j JOBS] [--regrade]``.

Resumable and incremental: each student's reports are written atomically and then sealed by
``students/<id>/grade.json`` (the grades.csv row plus a key: the submission's content hash and
the grader's own fingerprint). A student whose sealed key still matches is not graded again, so
an interrupted batch resumes where it stopped and a rerun grades only what is new or changed
(or everything, after the hidden tests, rubrics, points or reference solutions change). The
exit status is non-zero only when the grader itself failed, never because a student's code did.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import runinfo, shards
from .paths import AUTOGRADER, ROOT, SOLUTIONS
from .sandbox import LayerInfo, Limits
from .submission import Submission, load_submission, student_id

if TYPE_CHECKING:
    from .engine import Grade

BATCH_HELP = "grade every submission in a folder, in parallel and resumable"
SEAL = "grade.json"
GRADER_FAILED = "grader-error"


def add_batch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("submissions", type=Path, help="folder of submissions (sub-folders and .zip)")
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    p.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel graders (cores)"
    )
    p.add_argument("--regrade", action="store_true", help="grade everything again")
    p.add_argument(
        "--call-timeout",
        type=float,
        default=Limits.call_timeout,
        metavar="SECONDS",
        help="wall-clock limit per call into student code (default %(default)g)",
    )
    p.add_argument(
        "--shard",
        metavar="I/N|auto",
        help="grade only the I-th of N stable parts of the class (by a hash of the student id), "
        "for a job array; 'auto' reads the part from Slurm (SLURM_ARRAY_TASK_ID, _MIN, _COUNT) "
        f"or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX and {shards.COUNT_VARIABLE}). "
        "Join the parts with mha-grade merge.",
    )
    from .cli import add_sandbox_arguments

    add_sandbox_arguments(p)


def grader_fingerprint() -> str:
    """A hash of the hidden tests, rubrics, points and reference solutions: change any of them
    and the next batch regrades everyone. (After upgrading the grader's code, use --regrade.)"""
    h = hashlib.sha256()
    for folder in (AUTOGRADER, SOLUTIONS):
        for path in sorted(folder.rglob("*")):
            if (
                path.is_file()
                and path.suffix in {".py", ".toml"}
                and "__pycache__" not in path.parts
            ):
                h.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
                h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def find_submissions(folder: Path) -> tuple[dict[str, Path], list[str]]:
    """Student id -> path for every sub-folder and .zip; plus warnings about what was skipped.

    Two entries whose names give the same id (``ada.zip`` and ``ada/``, ``a b`` and ``a_b``,
    ``Ada`` and ``ada``, which share a folder on a case-insensitive disk) are both graded: the
    first in name order keeps the id, the others get ``-2``, ``-3``... and a warning says so.
    """
    paths = []
    warnings = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if not (path.is_dir() or (path.is_file() and path.suffix.lower() == ".zip")):
            warnings.append(f"skipped {path.name}: not a folder or .zip")
            continue
        paths.append(path)
    taken = {student_id(p).lower() for p in paths}
    found: dict[str, Path] = {}
    by_key: dict[str, Path] = {}
    for path in paths:
        sid = student_id(path)
        if sid.lower() in by_key:
            first = by_key[sid.lower()]
            n = 2
            while f"{sid}-{n}".lower() in taken:
                n += 1
            new = f"{sid}-{n}"
            taken.add(new.lower())
            warnings.append(
                f"{path.name} and {first.name} both give the student id {sid}: "
                f"{path.name} is graded as {new}"
            )
            sid = new
        by_key[sid.lower()] = path
        found[sid] = path
    return found, warnings


def read_seal(out: Path, student: str) -> dict | None:
    try:
        seal = json.loads((out / "students" / student / SEAL).read_text())
        return seal if isinstance(seal, dict) and isinstance(seal.get("row"), dict) else None
    except (OSError, ValueError):
        return None


def submission_key(submission: Submission, fingerprint: str) -> str:
    return f"{fingerprint}:{submission.digest()}"


# -- the grading processes ---------------------------------------------------------------------

_engine = None


def _start_engine(limits: Limits | None, require: str | None, protect: tuple[Path, ...]) -> None:
    """Runs once in each grading process: the sandbox and its imports start once per process,
    in the strongest layer that works for this process (recorded in each results.json)."""
    import atexit

    from .engine import Engine
    from .sandbox import SandboxError

    global _engine
    _engine = Engine(limits, require=require, protect=protect)
    try:
        _engine.start()
    except SandboxError:  # retried by each grade: a grader error for those students, not a 0
        pass
    atexit.register(_engine.close)


def _grade_one(
    submission: Submission, out: Path, key: str, review: tuple[dict, dict] | None = None
) -> tuple[dict, dict | None, float]:
    """Grade one submission in a grading process, write its reports, seal them. Also return the
    fingerprints of its code for the similarity report: made here, they cost the parent nothing
    and are spread over the grading processes."""
    from . import similarity

    grade = _engine.grade(submission)
    start = time.perf_counter()
    try:
        prints = similarity.fingerprint_files(submission.files, submission.student)
    except Exception:  # the parent makes them again
        prints = None
    seconds = time.perf_counter() - start
    # The seal is the last step: the parent gets the row right after it.
    return write_seal(out, grade, key, submission, review), prints, seconds


def write_seal(
    out: Path,
    grade: Grade,
    key: str,
    submission: Submission,
    review: tuple[dict, dict] | None = None,
) -> dict[str, str]:
    """Write the student's reports (with the review decisions ``review`` on this student, as
    ``reviews.Reviews.of`` gives them), then seal them: the grade-sheet row, the key, the grade
    as graded and what a review decision would judge (``reviews.judged``). The seal is the last
    step; returns the row as graded."""
    from . import report, reviewed, reviews

    judged = reviews.judged(submission.files)
    shown = reviewed.as_graded(grade, judged["hashes"], *review) if review else grade
    report.write_student(out, shown)
    row = report.grade_row(grade)
    seal = {
        "key": key,
        "row": row,
        "source": submission.source,
        "grade": report.grade_to_dict(grade),
        "judged": judged,
    }
    report.atomic_write(report.student_dir(out, grade.student) / SEAL, json.dumps(seal) + "\n")
    return row


# -- the parent ----------------------------------------------------------------------------------


@dataclass
class BatchResult:
    graded: int
    skipped: int
    failed: list[str]  # students the grader itself failed on
    rows: list[dict[str, str]]


def _progress():
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("grading"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[last]}"),
        transient=False,
    )


def _as_completed(futures: dict[Future, str]) -> Iterator[tuple[str, Future]]:
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
        for fut in done:
            yield futures[fut], fut


def run_batch_grading(
    submissions: Path,
    out: Path,
    jobs: int = 1,
    regrade: bool = False,
    show_progress: bool = True,
    limits: Limits | None = None,
    shard: shards.Shard | None = None,
    require: str | None = None,
    on_layer: Callable[[LayerInfo], None] | None = None,
) -> BatchResult:
    """Grade every submission in `submissions` (or in its `shard`) not already graded under
    `out`, in the strongest sandbox layer that works (no weaker than ``require``: raises
    LayerUnavailable before grading anything otherwise; ``on_layer`` hears which); then compare
    the class's code (unless it is one shard of it)."""
    from . import report
    from .sandbox import probe_layer, required_layer
    from .summary import build_summary

    require = required_layer(require)  # the flag, else $MHA_REQUIRE_SANDBOX

    found, warnings = find_submissions(submissions)
    for w in warnings:
        print(f"mha-grade batch: {w}", file=sys.stderr)
    if shard is not None:
        total = len(found)
        found = {sid: path for sid, path in found.items() if shard.holds(sid)}
        print(
            f"mha-grade batch: shard {shard}: {len(found)} of {total} submissions", file=sys.stderr
        )
    fingerprint = grader_fingerprint()
    todo: dict[str, tuple[Submission, str]] = {}  # loaded once, here; graded as loaded
    rows: dict[str, dict[str, str]] = {}
    sources: dict[str, dict[str, str]] = {}
    prints: dict[str, dict] = {}  # fingerprints the grading processes made
    for sid, path in found.items():
        submission = load_submission(path, student=sid)
        sources[sid] = {n: t for n, t in submission.files.items() if n in runinfo.CODE_FILES}
        key = submission_key(submission, fingerprint)
        seal = read_seal(out, sid)
        if seal is not None and seal.get("key") == key and not regrade:
            rows[sid] = seal["row"]
        else:
            todo[sid] = (submission, key)
    skipped = len(rows)
    failed: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    protect = (out, submissions)
    if todo:  # which layer the grading processes will find, before any of them starts
        layer = probe_layer(require, protect)
        if on_layer is not None:
            on_layer(layer)
    runinfo.write_sources(out, sources)
    record = {
        "fingerprint": fingerprint,
        "shard": None if shard is None else str(shard),
        "students": sorted(found),
        "submissions": str(Path(submissions).resolve()),
    }
    # Recorded before grading starts: a run killed outright (SIGKILL, a lost node) then leaves
    # "not finished" behind for the merge, not an earlier run's "finished" or no record at all.
    runinfo.write_run(out, _run_record(record, False, [], out, rows))
    finished = False
    try:
        if todo:
            spent = _grade_all(
                todo, out, jobs, rows, failed, show_progress, limits, prints, require, protect
            )
            # The report's cost while grading: fingerprints, spread over the grading processes.
            print(f"similarity: fingerprints made while grading in {spent:.2f} s ({jobs} jobs)")
        finished = True
    finally:
        # Whatever happened, the grade sheet lists every student graded so far, in id order,
        # with the review decisions that still hold.
        done = settle_reviews(out, [rows[sid] for sid in sorted(rows)], "batch")
        report.write_grades_csv(out, done)
        compare_class(out, sources if finished and shard is None else None, prints)
        whole = finished and len(rows) == len(found)
        runinfo.write_run(out, _run_record(record, whole, failed, out, rows))
        if done:
            build_summary(out)
    return BatchResult(len(rows) - skipped, skipped, failed, done)


def _run_record(
    record: dict, finished: bool, failed: list[str], out: Path, rows: dict[str, dict[str, str]]
) -> dict:
    """batch.json's content: `record` (fingerprint, shard, students, submissions) with whether
    the run finished, whom the grader failed on and the layer the graded students ran in."""
    layer = runinfo.containment_layer(out, sorted(rows))
    return {**record, "finished": finished, "grader_errors": sorted(failed), "layer": layer}


def _reviews_or_none(out: Path):
    """The decisions in ``out`` (None when there are none, or they cannot be read: ``settle``
    says so at the end)."""
    from . import reviews

    try:
        store = reviews.load(out)
    except reviews.ReviewsError:
        return None
    return store if store.decisions or store.reopened else None


def settle_reviews(out: Path, rows: list[dict[str, str]], command: str) -> list[dict[str, str]]:
    """The rows with the review decisions that still hold (see ``reviewed.settle``); a broken
    reviews.toml costs the decisions, never the grades."""
    from . import reviewed, reviews

    try:
        settled = reviewed.settle(out, rows)
    except reviews.ReviewsError as e:
        print(f"mha-grade {command}: review decisions not applied: {e}", file=sys.stderr)
        return rows
    reviewed.report_settled(settled, command)
    return settled.rows


def compare_class(
    out: Path, sources: dict[str, dict[str, str]] | None, prints: dict | None = None
) -> None:
    """Write the similarity report for `sources`, or remove a stale one (None: not compared);
    `prints` are fingerprints already made of some of them."""
    from . import similarity

    if sources is None:
        for name in (similarity.RESULT_FILE, similarity.HTML_FILE):
            (out / name).unlink(missing_ok=True)
        return
    start = time.perf_counter()
    try:
        result = similarity.compare(sources, given=prints)
        similarity.write(out, result)
        seconds = time.perf_counter() - start
        print(f"similarity: {len(sources)} submissions compared in {seconds:.2f} s")
    except Exception as e:  # never lose a batch's grades to the similarity report
        print(f"mha-grade: the similarity report failed: {e!r}", file=sys.stderr)


def _failure_row(sid: str) -> dict[str, str]:
    """A grade-sheet row for a student the grader itself failed on: zero, flagged, not sealed
    (so the next run tries again)."""
    from . import report
    from .engine import Grade

    return {**report.grade_row(Grade(sid, [], status=GRADER_FAILED)), "needs_review": "true"}


def _grade_all(
    todo: dict[str, tuple[Submission, str]],
    out: Path,
    jobs: int,
    rows: dict[str, dict[str, str]],
    failed: list[str],
    show_progress: bool,
    limits: Limits | None,
    prints: dict[str, dict] | None = None,
    require: str | None = None,
    protect: tuple[Path, ...] = (),
) -> float:
    """Grade `todo` in `jobs` processes; returns the seconds they spent on fingerprints."""
    import multiprocessing

    # "spawn": a fresh interpreter per grading process, never a fork of this one with its
    # threads (the progress bar) and torch's thread pools.
    ctx = multiprocessing.get_context("spawn")
    jobs = max(1, min(jobs, len(todo)))
    pool = ProcessPoolExecutor(
        jobs, mp_context=ctx, initializer=_start_engine, initargs=(limits, require, protect)
    )
    store = _reviews_or_none(out)  # decisions go into the reports as they are first written
    futures = {
        pool.submit(_grade_one, sub, out, key, store.of(sid) if store else None): sid
        for sid, (sub, key) in todo.items()
    }
    fingerprint_seconds = 0.0
    progress = _progress() if show_progress else None
    task = progress.add_task("grading", total=len(todo), last="") if progress else None
    if progress:
        progress.start()
    try:
        for sid, fut in _as_completed(futures):
            try:
                row, made, seconds = fut.result()
                fingerprint_seconds += seconds
                if prints is not None and made:
                    prints[sid] = made
            except Exception as e:  # the grader's failure, not the student's
                print(f"mha-grade batch: grading {sid} failed: {e!r}", file=sys.stderr)
                row = _failure_row(sid)
                # an older seal no longer describes this submission: its grade must not be
                # taken for the current one (by a review, say)
                (out / "students" / sid / SEAL).unlink(missing_ok=True)
            rows[sid] = row
            if row.get("status") == GRADER_FAILED:
                failed.append(sid)
            if progress:
                progress.update(task, advance=1, last=f"{sid}: {row['total']}")
    except BaseException:
        # Ctrl-C or a kill: drop the queue and stop the grading processes (their sandboxes die
        # with them). Sealed students stay graded; the rest are graded by the next run.
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if progress:
            progress.stop()
    pool.shutdown(wait=True)
    return fingerprint_seconds


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_batch(args: argparse.Namespace) -> int:
    if not args.submissions.is_dir():
        print(f"mha-grade batch: {args.submissions} is not a folder", file=sys.stderr)
        return 2
    try:
        shard = shards.parse(args.shard) if args.shard else None
    except shards.ShardError as e:
        print(f"mha-grade batch: {e}", file=sys.stderr)
        return 2
    from . import reviews

    try:  # checked before grading: a broken file must not wait for the end of a long run
        reviews.load(args.out)
    except reviews.ReviewsError as e:
        print(f"mha-grade batch: {e}; fix or remove it, then run again", file=sys.stderr)
        return 2
    from .cli import cannot_grade, report_layer
    from .sandbox import LayerUnavailable

    start = time.perf_counter()
    signal.signal(signal.SIGTERM, _interrupt)  # a kill ends like Ctrl-C: the sheet is written
    try:
        result = run_batch_grading(
            args.submissions,
            args.out,
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
    print(f"grade sheet: {args.out / 'grades.csv'}")
    print(f"summary: {args.out / 'summary.md'}")
    print(f"feedback: {args.out / 'students'}/<student>/feedback.md")
    waiting = sum(r.get("needs_review") == "true" for r in result.rows)
    if waiting:
        who = f"{waiting} student{'s' if waiting != 1 else ''}"
        print(f"waiting for a person's review: {who} (mha-grade review {args.out})")
    if shard is None:
        print(f"similar submissions: {args.out / 'similarity.html'}")
    else:
        print(f"shard {shard} done; join the shards with: mha-grade merge OUT_1 ... OUT_N -o OUT")
    if result.failed:
        print(f"the grader failed on: {', '.join(result.failed)}", file=sys.stderr)
        return 1
    return 0
