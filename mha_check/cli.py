"""mha-check [PATH] [--question QID]: run the public tests on the student's own files."""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from . import waiting
from .limits import CALL_SECONDS
from .questions import (
    CALLEES,
    CODE_QUESTIONS,
    NEEDS_TORCH,
    NUMPY_BROKEN,
    NUMPY_QUESTIONS,
    QUESTION_IDS,
    STUDENT_FILES,
    WRITTEN_QUESTIONS,
)
from .results import QuestionResult, Status

DEFAULT_TIME_LIMIT = CALL_SECONDS  # per check, as grading's per call; checks take milliseconds


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mha-check",
        description="Check your multi-head attention exercises against the public tests.",
        epilog="Exit status: 0 when every selected question passes (or is answered), 1 otherwise, "
        "2 when the check could not run (no such folder, a package missing).",
    )
    p.add_argument(
        "path",
        nargs="?",
        type=Path,
        help="folder (or .zip) with multihead.py, crosscheck.py and answers.md "
        "(default: ./exercises)",
    )
    p.add_argument(
        "-q",
        "--question",
        action="append",
        choices=QUESTION_IDS,
        metavar="QID",
        help="check only this question (may be repeated); ids: " + ", ".join(QUESTION_IDS),
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"stop a check that runs longer than this (default: {DEFAULT_TIME_LIMIT:g})",
    )
    p.add_argument(
        "--tests",
        type=Path,
        metavar="DIR",
        help="folder of public test files (default: tests/ beside your files, else shipped ones)",
    )
    p.add_argument(
        "--show-output", action="store_true", help="show what your code printed during the checks"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("\nmha-check: interrupted.", file=sys.stderr)
        return 130
    except Exception as e:  # never show a traceback of mha-check itself
        print(
            f"mha-check itself failed ({type(e).__name__}: {e}). This is a problem in mha-check, "
            "not in your code: please tell your instructor.",
            file=sys.stderr,
        )
        return 2


def _run(args: argparse.Namespace) -> int:
    from . import report  # rich: imported here so that --help stays instant
    from .folder import default_path

    console = report.make_console()
    path = args.path if args.path is not None else default_path(Path.cwd())
    if path.is_file() and path.suffix.lower() == ".zip":
        with tempfile.TemporaryDirectory(prefix="mha-check-") as unpacked:
            try:
                with zipfile.ZipFile(path) as zf:
                    zf.extractall(unpacked)  # zipfile drops absolute and ".." parts of names
            except (zipfile.BadZipFile, OSError) as e:
                console.print(f"mha-check: {path} could not be unzipped ({e}).", markup=False)
                return 2
            console.print(f"mha-check: checking the files inside {path}", markup=False)
            return _check_folder(args, console, Path(unpacked))
    if path.is_file() and path.name in STUDENT_FILES:
        path = path.parent  # `mha-check exercises/multihead.py` checks that file's folder
    if not path.is_dir():
        console.print(f"mha-check: {path} is not a folder.", markup=False)
        return 2
    return _check_folder(args, console, path)


def _check_folder(args: argparse.Namespace, console: Any, path: Path) -> int:
    from . import report
    from .folder import find_student_folder, find_tests, folder_note, not_handed_in_note

    folder = find_student_folder(path).resolve()
    for note in (folder_note(path), not_handed_in_note(folder)):
        if note:
            console.print(f"mha-check: {note}.", markup=False)
    selected = args.question or list(QUESTION_IDS)
    code_qids = [q for q in QUESTION_IDS if q in CODE_QUESTIONS and q in selected]
    written_qids = [q for q in QUESTION_IDS if q in WRITTEN_QUESTIONS and q in selected]

    tests = args.tests.resolve() if args.tests else find_tests(folder)
    report.print_header(console, folder, tests if code_qids else None)
    if code_qids and tests is None:
        console.print(
            "mha-check: the public tests were not found (expected a tests/ folder beside your "
            "files, or exercises/tests beside mha_check).",
            markup=False,
        )
        return 2

    missing = _import_libraries(code_qids)
    if missing:
        console.print(
            f"mha-check: the package {missing} is not installed in this Python; install the "
            "packages listed in requirements.txt (see the README), then run mha-check again.",
            markup=False,
        )
        return 2

    results: list[QuestionResult] = []
    problems: list[str] = []
    if code_qids:
        results, problems = _code_results(code_qids, folder, tests, args)
    from .written import written_results

    results += written_results(folder, written_qids)
    report.print_problems(console, problems)
    report.print_results(console, results, args.show_output)
    report.print_summary(console, results, everything=set(selected) >= set(QUESTION_IDS))
    return 0 if all(r.done for r in results) else 1


def _import_libraries(code_qids: list[str]) -> str | None:
    """Import numpy (and torch if needed) before any student code; the missing one's name."""
    # Before the student's folder goes on sys.path: their import time never counts against a
    # check's time limit, and a student's file cannot shadow them.
    names = ["numpy", "rich"] + (["torch"] if NEEDS_TORCH & set(code_qids) else [])
    for name in names:
        try:
            __import__(name)
        except ImportError:
            return name
    return None


def _code_results(
    qids: list[str], folder: Path, tests: Path, args: argparse.Namespace
) -> tuple[list[QuestionResult], list[str]]:
    files = sorted({CODE_QUESTIONS[q] for q in qids}, key=["multihead.py", "crosscheck.py"].index)
    if "crosscheck.py" in files and "multihead.py" not in files:
        files.insert(0, "multihead.py")  # crosscheck.py imports it: load it (and report it) first
    # The code runs from a private folder holding the code files as grading's worker gets them
    # (read by the same rule, written as UTF-8) and nothing else (folder.handed_in).
    with tempfile.TemporaryDirectory(prefix="mha-check-") as private:
        return _code_results_in(qids, files, folder, Path(private), tests, args)


def _code_results_in(
    qids: list[str],
    files: list[str],
    folder: Path,
    private: Path,
    tests: Path,
    args: argparse.Namespace,
) -> tuple[list[QuestionResult], list[str]]:
    from .folder import handed_in
    from .imports import ImportRule
    from .loading import LoadedFile, load_student_files
    from .otter_format import exception_test_file_class

    unreadable = handed_in(folder, private)
    shown, folder = folder, private.resolve()
    rule = ImportRule(folder, own=shown)  # the student's files import as grading lets them
    with rule:
        loaded = load_student_files(folder, files, args.time_limit, shown=shown)
    for name, why in unreadable.items():
        if name in loaded:
            loaded[name] = LoadedFile(name, problem=f"{why}.")
    problems = [lf.problem for lf in loaded.values() if lf.problem]
    numpy_side, numpy_module = _numpy_side(loaded, folder, rule, args.time_limit)
    if numpy_side:
        problems.append(numpy_side)
    if args.show_output:
        problems += [
            f"{lf.name} printed while loading:\n{lf.output.rstrip()}"
            for lf in loaded.values()
            if lf.output.strip()
        ]

    env: dict[str, Any] = {}
    for lf in reversed(list(loaded.values())):  # multihead.py's names win over crosscheck.py's
        if lf.module is not None:
            env.update(vars(lf.module))

    ExceptionTestFile = exception_test_file_class()
    done: dict[str, QuestionResult] = {}

    def result_of(q: str) -> QuestionResult:
        """Question q's checks, run once (a callee's too when a composite needs to know)."""
        if q not in done and numpy_side and q in NUMPY_QUESTIONS:  # as grading: none run
            why = "multihead.py could not be imported where the NumPy questions run (see above)."
            done[q] = QuestionResult(q, Status.UNAVAILABLE, why)
        if q not in done:
            own = numpy_module if q in NUMPY_QUESTIONS else None
            done[q] = _run_checks(q, loaded, env, tests, ExceptionTestFile, folder, args, own)
        return done[q]

    beside_done: dict[str, QuestionResult] = {}

    def beside(caller: str, q: str) -> QuestionResult | None:
        """A NumPy question q's checks on multihead.py as crosscheck.py leaves it, for a
        caller in crosscheck.py (grading's torch worker runs both files together)."""
        if numpy_module is None or q not in NUMPY_QUESTIONS or caller in NUMPY_QUESTIONS:
            return None
        if q not in beside_done:
            beside_done[q] = _run_checks(q, loaded, env, tests, ExceptionTestFile, folder, args)
        return beside_done[q]

    with rule:
        results = waiting.apply([result_of(q) for q in qids], result_of, beside)
    return results, problems


def _numpy_side(loaded, folder: Path, rule, seconds) -> tuple[str | None, Any]:
    """multihead.py loaded again as grading loads it for the NumPy questions: alone, torch
    withheld (``withheld.load_numpy_side``). Why it would not load there, in grading's words
    (None when it would), and the module the NumPy questions are checked on (None: the one
    loaded beside crosscheck.py)."""
    from .limits import TimeLimitExceeded, call_limits, captured_output
    from .tracing import describe, exception_text, student_frame
    from .withheld import load_numpy_side

    own = loaded.get("multihead.py")
    if own is None or own.module is None:
        return None, None
    with rule, captured_output():
        try:
            with call_limits(seconds):
                module, failed = load_numpy_side(folder / "multihead.py")
        except TimeLimitExceeded:
            return None, None  # it loaded once in time: a slow machine, not the NumPy rule
    if failed is None:
        return None, module
    frame = student_frame(failed, folder)
    at = f" (at {describe(frame)})" if frame else ""
    why = f"{exception_text(failed)}{at}"
    problem = NUMPY_BROKEN.format(label="multihead.py", why=why) + (
        ". Use torch inside parameter_counts only, never at the top of multihead.py."
    )
    return problem, None


def _run_checks(
    q, loaded, env, tests, ExceptionTestFile, folder, args, alone=None
) -> QuestionResult:
    """``alone``: multihead.py loaded on its own for a NumPy question, as grading's NumPy
    worker has it (no crosscheck.py beside it to rebind its functions)."""
    from .runner import run_question

    own = loaded.get(CODE_QUESTIONS[q])
    if own is None or own.module is None:
        name = own.name if own is not None else CODE_QUESTIONS[q]
        return QuestionResult(q, Status.UNAVAILABLE, f"{name} could not be loaded (see above).")
    test_path = tests / f"{q}.py"
    if not test_path.is_file():
        return QuestionResult(q, Status.UNAVAILABLE, f"no public test file {test_path}")
    try:
        test_file = ExceptionTestFile.from_file(str(test_path))
    except Exception as e:  # e.g. a package the test needs is not installed
        message = f"its public test {test_path.name} could not be loaded ({type(e).__name__}: {e})"
        return QuestionResult(q, Status.UNAVAILABLE, message)
    for callee in CALLEES.get(q, ()):  # a callee in a file that did not load (grading too)
        other = CODE_QUESTIONS[callee]
        if other != CODE_QUESTIONS[q] and (loaded.get(other) is None or not loaded[other].module):
            why = f"{q} calls {callee} from {other}, which could not be loaded."
            return QuestionResult(q, Status.UNAVAILABLE, why)
    if alone is not None:
        question_env = dict(vars(alone))
    else:
        question_env = {**env, **vars(own.module)}  # the question's own file decides its names
    return run_question(q, test_file, question_env, folder, args.time_limit)
