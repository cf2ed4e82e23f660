"""In the Gradescope container: what ``run_autograder`` runs, as
``python -m mha_grader.handouts.gradescope.run``.

It closes the autograder's files to the student's uid, grades ``ROOT/submission`` with the same
engine as ``mha-grade one`` and writes ``ROOT/results/results.json``: always, a grader error
included (then 0 points, a message that this is not the student's grade, and the reason in
``extra_data`` for the instructor). ``ROOT`` is ``/autograder`` unless ``MHA_AUTOGRADER_ROOT``
moves it. ``--check`` is what ``setup.sh`` asks before the image is saved.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import sys
import traceback
from pathlib import Path

from mha_check.folder import IGNORED_DIRS
from mha_check.questions import QUESTION_IDS

from ... import paths
from ...outcomes import Status, Tag
from ...outputs.folder import write_atomic
from ...paths import ensure_solutions_importable
from ...points import MAX_TOTAL, POINTS
from ...sandbox import LayerUnavailable

GRADER_ERROR_MESSAGE = (
    "Grading failed because of a problem in the autograder, not in your submission. "
    "This is not your grade: the error is recorded for your instructor, who will grade your "
    "submission again."
)


def prepare_imports() -> None:
    """Make the trusted side importable as installed by setup.sh: the reference solutions, and
    otter's test-file format without the rest of otter (installed without its dependencies)."""
    from mha_check.otter_format import exception_test_file_class

    ensure_solutions_importable()
    exception_test_file_class()


def check_ready() -> None:
    """What setup.sh checks before the image is saved: grading imports, libseccomp, the hidden
    tests and the pinned versions. Raises with the reason."""
    import importlib.metadata

    prepare_imports()
    import numpy  # noqa: F401
    import torch  # noqa: F401

    from ...sandbox.worker import seccomp

    seccomp.library()  # the layers without namespaces (Gradescope's) filter with libseccomp

    from ... import written  # noqa: F401  (the grading imports, as a submission needs them)
    from ...grading import engine, hidden  # noqa: F401
    from .packages import GRADING_PACKAGES, NO_DEPS_PACKAGES, requirements_text

    hidden.all_cases()  # every hidden test file parses with otter's format
    for line in requirements_text(GRADING_PACKAGES + NO_DEPS_PACKAGES).split():
        name, version = line.split("==")
        got = importlib.metadata.version(name).split("+")[0]
        if got != version:
            raise RuntimeError(f"{name} {got} is installed; requirements.lock pins {version}")


def _close(path: Path) -> None:
    """Nobody but the owner (root) may read, write or enter ``path`` or anything under it."""
    if path.is_symlink():
        return
    path.chmod(stat.S_IMODE(path.lstat().st_mode) & 0o700)
    if path.is_dir():
        for child in path.iterdir():
            _close(child)


def close_trusted(root: Path, prefix: str | None = None) -> None:
    """Gradescope's advice, done before any student code runs: the student's uid can read
    nothing of the autograder (source, hidden tests, solutions, the grader, the submission,
    results, metadata). Left open: ``root`` itself to pass through (not to list), and the
    interpreter's ``prefix`` (default: this one's virtualenv, which setup.sh made readable)
    when it lives in ``root``."""
    root = root.resolve()
    if (root / "source").resolve() != paths.ROOT:  # never chmod a folder that is not ours
        raise RuntimeError(
            f"{root} is not this autograder's root: the grader runs from {paths.ROOT}, not "
            f"from {root / 'source'}; no permissions were changed"
        )
    venv = Path(prefix or sys.prefix).resolve()
    for entry in root.iterdir():
        if entry.resolve() != venv and not entry.is_symlink():
            _close(entry)
    root.chmod(0o711)


def submission_path(root: Path) -> Path:
    """``root/submission``, or the one ``.zip`` in it when that is all a student uploaded."""
    folder = root / "submission"
    entries = [
        p for p in folder.iterdir() if not p.name.startswith(".") and p.name not in IGNORED_DIRS
    ]
    if len(entries) == 1 and entries[0].is_file() and entries[0].suffix.lower() == ".zip":
        return entries[0]
    return folder


def grade_container(root: Path) -> dict:
    """Grade ``root/submission``; return its results in Gradescope's format."""
    # After prepare_imports: the grading imports need `solutions` and otter's test-file format.
    from ...grading.engine import Engine
    from ...grading.submission import load_submission
    from ...outputs import reports

    # The engine checks, as a worker, that these are closed (besides the grader's own files).
    protect = (root / "submission", root / "results", root / "submission_metadata.json")
    with Engine(protect=protect) as engine:  # the sandbox boots while the submission is read
        submission = load_submission(submission_path(root))
        submission.student = _student_name(root) or submission.student
        grade = engine.grade(submission)
        if engine.layer is not None:  # once, for the instructor (stdout is hidden)
            print(engine.layer.describe(), flush=True)
    results = reports.results_json(grade)
    if grade.status == Status.GRADER_ERROR:  # some questions not graded: not a grade to show
        return grader_error_results("some questions could not be graded", partial=results)
    # run_autograder's own output (the sandbox's line, warnings) is for the instructor
    results["stdout_visibility"] = "hidden"
    return results


def grader_error_results(reason: str, detail: str = "", partial: dict | None = None) -> dict:
    """Results for a grading that failed: 0 points and a message that this is not the student's
    grade; the reason, and what was graded, in ``extra_data`` for the instructor."""
    extra: dict = {"status": Status.GRADER_ERROR, "reason": reason, "max_total": MAX_TOTAL}
    if partial is not None:
        extra["partial_score"] = partial.get("score")
        extra["partial_tests"] = [
            {k: t.get(k) for k in ("name", "score", "max_score", "tags")}
            for t in partial.get("tests", [])
        ]
        extra.update({k: v for k, v in partial.get("extra_data", {}).items() if k not in extra})
    if detail:
        extra["detail"] = detail[-4000:]
    return {
        "score": 0.0,
        "output": GRADER_ERROR_MESSAGE,
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": f"{qid}: not graded",
                "score": 0.0,
                "max_score": POINTS[qid],
                "output": "Not graded. " + GRADER_ERROR_MESSAGE,
                "visibility": "visible",
                "tags": [Tag.GRADER_ERROR],
            }
            for qid in QUESTION_IDS
        ],
        "extra_data": extra,
    }


def write_results(root: Path, results: dict) -> Path:
    """Write ``root/results/results.json`` atomically, as strict JSON (no NaN)."""
    path = root / "results" / "results.json"  # Gradescope's layout, not an OutputFolder
    write_atomic(path, json.dumps(results, indent=2, allow_nan=False) + "\n")
    return path


def _student_name(root: Path) -> str | None:
    """The submitter's name from Gradescope's metadata, when there is one."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text())
        return str(meta["users"][0]["name"]) or None
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


class Stopped(BaseException):
    """SIGTERM (run_autograder's time limit); a BaseException, past the engine's handlers."""


def _stop(signum: int, frame: object) -> None:
    raise Stopped(f"stopped by signal {signum} (the time limit of run_autograder)")


class _Recent(logging.Handler):
    """The grader's warnings and errors, kept for the instructor's ``extra_data.detail``."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def text(self) -> str:
        return "\n".join(self.lines)


def main(argv: list[str] | None = None) -> int:
    """Grade, or on any failure of ours write a grader-error result. Exit 0 once results.json
    is written (Gradescope then shows it), 1 when even that failed."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:  # setup.sh: can grading start with this interpreter?
        try:
            check_ready()
        except Exception as e:
            print(f"the grader cannot start: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        return 0
    logging.basicConfig(level=logging.WARNING, format="mha-grade: %(levelname)s: %(message)s")
    recent = _Recent()
    logging.getLogger().addHandler(recent)
    signal.signal(signal.SIGTERM, _stop)
    root = Path(os.environ.get("MHA_AUTOGRADER_ROOT", "/autograder"))
    try:
        prepare_imports()
        close_trusted(root)
        results = grade_container(root)
        if results["extra_data"].get("status") == Status.GRADER_ERROR:
            results["extra_data"]["detail"] = recent.text()[-4000:]
        json.dumps(results, allow_nan=False)  # refuse a result Gradescope could not read
    except LayerUnavailable as e:  # this container allows no layer: its one line says why
        print(f"run_autograder: {e}", file=sys.stderr)
        results = grader_error_results(str(e)[:500], recent.text())
    except (Exception, Stopped) as e:
        traceback.print_exc()
        detail = "\n".join((recent.text(), traceback.format_exc()))
        results = grader_error_results(f"{type(e).__name__}: {e}"[:500], detail)
    try:
        write_results(root, results)
    except Exception:
        traceback.print_exc()
        return 1
    status = results["extra_data"].get("status")
    print(f"graded: {results['score']:g} points (status {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
