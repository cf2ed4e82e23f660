"""Grade a whole class: ``mha-grade batch SUBMISSIONS_DIR -o OUT [-j JOBS] [--regrade]``.

Resumable and incremental: each student's reports are written atomically and then sealed by
``students/<id>/grade.json`` (the grades.csv row plus a key: the submission's content hash and
the grader's own fingerprint). A student whose sealed key still matches is not graded again, so
an interrupted batch resumes where it stopped and a rerun grades only what is new or changed
(or everything, after the hidden tests, rubrics, points or reference solutions change). The
exit status is non-zero only when the grader itself failed, never because a student's code did.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..grading.engine import Engine
from ..grading.fingerprint import grader_fingerprint, submission_key
from ..grading.submission import Submission, load_submission, student_id
from ..outcomes import Status
from ..outputs import similarity
from ..outputs.containment import containment_layer
from ..outputs.folder import CODE_FILES, OutputFolder
from ..outputs.summary import build_summary
from ..sandbox import LayerInfo, Limits, SandboxError, probe_layer, required_layer
from . import shards
from .record import compare_class, decisions_or_none, failure_row, record_grade, settle_reviews


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


# -- the grading processes ---------------------------------------------------------------------

_engine = None


# Submissions per grading process from which its sandbox backs its heap with huge pages: about
# 2 ms less CPU per worker (two per submission: fork and exit of the warmed zygote measured
# 5.0 -> 3.1 ms), for 0.8 s of CPU once.
COLLAPSE_FROM = 200


def _start_engine(
    limits: Limits | None,
    require: str | None,
    protect: tuple[Path, ...],
    turn=None,
    collapse: bool = False,
) -> None:
    """Runs once in each grading process: the sandbox and its imports start once per process,
    in the strongest layer that works for this process (recorded in each results.json).

    ``turn`` (a lock and an event shared by the grading processes): the first process to take
    the lock starts at once and says when it is ready to grade; the others wait for that (a
    minute at most) before they start. Started together, every process and its sandbox would
    import torch at once and share the cores four ways: the first grade would come when all
    of them are ready. One at a time, the first grade comes as soon as one is."""
    global _engine
    # A forked grading process keeps the parent's handlers: a SIGTERM from the parent (when a
    # run is interrupted) must end it, as it ends a fresh interpreter.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if turn is not None:
        lock, ready = turn
        first = lock.acquire(block=False)  # never released: only one process is the first
        if not first:
            ready.wait(timeout=60.0)
    _engine = Engine(limits, require=require, protect=protect, collapse=collapse)
    try:
        _engine.start()
        if turn is not None and first:
            _engine.warm()
    except SandboxError:  # retried by each grade: a grader error for those students, not a 0
        pass
    finally:
        if turn is not None and first:
            ready.set()
    # Run at the end of a forked process too (which never runs atexit's handlers).
    multiprocessing.util.Finalize(None, _engine.close, exitpriority=10)


def _grade_one(
    submission: Submission, out: OutputFolder, key: str, review: tuple[dict, dict] | None = None
) -> tuple[dict, dict | None, float]:
    """Grade one submission in a grading process, write its reports, seal them. Also return the
    fingerprints of its code for the similarity report: made here, they cost the parent nothing
    and are spread over the grading processes."""
    grade = _engine.grade(submission)
    start = time.perf_counter()
    try:
        prints = similarity.fingerprint_files(submission.files, submission.student)
    except Exception:  # the parent makes them again
        prints = None
    seconds = time.perf_counter() - start
    # The seal is the last step: the parent gets the row right after it.
    return record_grade(out, grade, key, submission, review), prints, seconds


# -- the parent ----------------------------------------------------------------------------------


@dataclass
class BatchResult:
    graded: int
    skipped: int
    failed: list[str]  # students the grader itself failed on
    rows: list[dict[str, str]]


def _progress() -> Progress:
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
    out: OutputFolder | Path,
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
    out = out if isinstance(out, OutputFolder) else OutputFolder(out)
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
    out.make()
    jobs = max(1, min(jobs, len(found)))
    processes = _Processes(jobs, limits, require, (out.root, submissions))
    if found and require is None and (regrade or not out.sealed_students()):
        # Every student is to be graded, in whichever layer works: the grading processes start
        # now, and their sandboxes boot (torch's import, mostly) while this process reads the
        # class. (A required layer is probed first: refused, nothing starts.)
        processes.start(len(found))
    try:
        return _run(
            submissions, out, found, processes, regrade, show_progress, shard, require, on_layer
        )
    finally:
        processes.stop()


def _run(
    submissions: Path,
    out: OutputFolder,
    found: dict[str, Path],
    processes: _Processes,
    regrade: bool,
    show_progress: bool,
    shard: shards.Shard | None,
    require: str | None,
    on_layer: Callable[[LayerInfo], None] | None,
) -> BatchResult:
    fingerprint = grader_fingerprint()
    todo: dict[str, tuple[Submission, str]] = {}  # loaded once, here; graded as loaded
    rows: dict[str, dict[str, str]] = {}
    sources: dict[str, dict[str, str]] = {}
    prints: dict[str, dict] = {}  # fingerprints the grading processes made
    for sid, path in found.items():
        submission = load_submission(path, student=sid)
        sources[sid] = {n: t for n, t in submission.files.items() if n in CODE_FILES}
        key = submission_key(submission, fingerprint)
        seal = out.read_seal(sid)
        if seal is not None and seal.key == key and not regrade:
            rows[sid] = seal.row
        else:
            todo[sid] = (submission, key)
    skipped = len(rows)
    failed: list[str] = []
    if todo:  # which layer the grading processes find, said before any grade
        layer = probe_layer(require, (out.root, submissions))
        if on_layer is not None:
            on_layer(layer)
    out.write_sources(sources)
    record = {
        "fingerprint": fingerprint,
        "shard": None if shard is None else str(shard),
        "students": sorted(found),
        "submissions": str(Path(submissions).resolve()),
    }
    # Recorded before grading starts: a run killed outright (SIGKILL, a lost node) then leaves
    # "not finished" behind for the merge, not an earlier run's "finished" or no record at all.
    out.write_run(_run_record(record, False, [], out, rows))
    finished = False
    try:
        if todo:
            pool = processes.start(len(todo))
            spent = _grade_all(pool, todo, out, rows, failed, show_progress, prints)
            # The report's cost while grading: fingerprints, spread over the grading processes.
            jobs = processes.jobs
            print(f"similarity: fingerprints made while grading in {spent:.2f} s ({jobs} jobs)")
        finished = True
    finally:
        # Whatever happened, the grade sheet lists every student graded so far, in id order,
        # with the review decisions that still hold: also those a grading process sealed
        # while this process was being interrupted, before their row reached it.
        for sid, (_, key) in todo.items():
            seal = out.read_seal(sid) if sid not in rows else None
            if seal is not None and seal.key == key:
                rows[sid] = seal.row
        done = settle_reviews(out, [rows[sid] for sid in sorted(rows)], "batch")
        out.write_grades(done)
        compare_class(out, sources if finished and shard is None else None, prints)
        whole = finished and len(rows) == len(found)
        out.write_run(_run_record(record, whole, failed, out, rows))
        if done:
            build_summary(out)
    return BatchResult(len(rows) - skipped, skipped, failed, done)


def _run_record(
    record: dict, finished: bool, failed: list[str], out: OutputFolder, rows: dict[str, dict]
) -> dict:
    """batch.json's content: `record` (fingerprint, shard, students, submissions) with whether
    the run finished, whom the grader failed on and the layer the graded students ran in."""
    layer = containment_layer(out, sorted(rows))
    return {**record, "finished": finished, "grader_errors": sorted(failed), "layer": layer}


def _start_method() -> str:
    """ "fork" where this process is safe to fork (one thread, torch not imported: the command
    line's case), which saves each grading process a new interpreter and its imports (about
    0.4 s before the first grade); "spawn" otherwise (a fork of a process with other threads,
    or with torch's thread pools, can inherit a lock held by a thread that is not copied)."""
    safe = threading.active_count() == 1 and "torch" not in sys.modules
    return "fork" if safe and sys.platform.startswith("linux") else "spawn"


class _Processes:
    """The grading processes of a run, started once, when first needed (each starts its
    engine as it begins)."""

    def __init__(
        self, jobs: int, limits: Limits | None, require: str | None, protect: tuple[Path, ...]
    ):
        self.jobs, self.limits, self.require, self.protect = jobs, limits, require, protect
        self.pool: ProcessPoolExecutor | None = None

    def start(self, needed: int) -> ProcessPoolExecutor:
        """The pool for ``needed`` submissions, started now if it is not yet (with no more
        processes than that)."""
        if self.pool is None:
            self.jobs = max(1, min(self.jobs, needed))
            ctx = multiprocessing.get_context(_start_method())
            turn = (ctx.Lock(), ctx.Event()) if self.jobs > 1 else None
            collapse = needed >= COLLAPSE_FROM * self.jobs
            self.pool = ProcessPoolExecutor(
                self.jobs,
                mp_context=ctx,
                initializer=_start_engine,
                initargs=(self.limits, self.require, self.protect, turn, collapse),
            )
            for _ in range(self.jobs):  # a process starts for a task: one each, doing nothing
                self.pool.submit(int)
        return self.pool

    def stop(self) -> None:
        if self.pool is not None:
            _stop_pool(self.pool)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop the grading processes without waiting for what they are doing (their sandboxes
    die with them): students graded so far are sealed already."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _grade_all(
    pool: ProcessPoolExecutor,
    todo: dict[str, tuple[Submission, str]],
    out: OutputFolder,
    rows: dict[str, dict[str, str]],
    failed: list[str],
    show_progress: bool,
    prints: dict[str, dict] | None = None,
) -> float:
    """Grade `todo` in the grading processes of ``pool``; returns the seconds they spent on
    fingerprints."""
    store = decisions_or_none(out)  # decisions go into the reports as they are first written
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
                row = failure_row(sid)
                # an older seal no longer describes this submission: its grade must not be
                # taken for the current one (by a review, say)
                out.drop_seal(sid)
            rows[sid] = row
            if row.get("status") == Status.GRADER_ERROR:
                failed.append(sid)
            if progress:
                progress.update(task, advance=1, last=f"{sid}: {row['total']}")
    except BaseException:
        # Ctrl-C or a kill: drop the queue and stop the grading processes (their sandboxes die
        # with them). Sealed students stay graded; the rest are graded by the next run.
        _stop_pool(pool)
        raise
    finally:
        if progress:
            progress.stop()
    pool.shutdown(wait=True)
    return fingerprint_seconds
