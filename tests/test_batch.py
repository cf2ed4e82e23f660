"""`mha-grade batch`: every student gets a row, nothing is lost on interruption, reruns are
incremental."""

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from mha_check.questions import QUESTION_IDS
from mha_grader.outputs.folder import OutputFolder
from mha_grader.points import MAX_TOTAL
from mha_grader.runs.batch import find_submissions, run_batch_grading
from mha_grader.sandbox import Limits

SEAL = OutputFolder.SEAL

ROOT = Path(__file__).resolve().parent.parent
FILES = ("multihead.py", "crosscheck.py", "answers.md")
LIMITS = Limits(call_timeout=0.5, submission_timeout=5.0)  # a hang costs seconds, not minutes


def correct(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copy(ROOT / "solutions" / name, folder / name)
    return folder


def hostile_exit_at_import(folder: Path) -> Path:
    correct(folder)
    with open(folder / "multihead.py", "a") as f:
        f.write("\nimport os\nos._exit(3)\n")
    return folder


def hang_in_softmax(folder: Path) -> Path:
    correct(folder)
    src = (folder / "multihead.py").read_text()
    src = src.replace('"""Numerically stable softmax along `axis`."""', "while True:\n        pass")
    (folder / "multihead.py").write_text(src)
    return folder


def zipped(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in FILES:
            zf.write(ROOT / "solutions" / name, f"exercises/{name}")
    return path


def read_rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    out = tmp_path_factory.mktemp("out")
    correct(subs / "ana")
    shutil.copytree(ROOT / "exercises", subs / "ben")  # untouched stubs
    zipped(subs / "cy.zip")
    hostile_exit_at_import(subs / "dee")
    hang_in_softmax(subs / "eve")
    (subs / "notes.txt").write_text("not a submission")
    result = run_batch_grading(subs, out, jobs=2, show_progress=False, limits=LIMITS)
    return subs, out, result


def test_batch_writes_a_row_and_reports_for_every_student_even_hostile_ones(graded_class):
    _, out, result = graded_class
    rows = read_rows(out)
    assert sorted(rows) == ["ana", "ben", "cy", "dee", "eve"]
    assert result.failed == []
    for sid in rows:
        folder = out / "students" / sid
        assert (folder / "results.json").is_file() and (folder / "feedback.md").is_file()
    assert (out / "summary.md").is_file()


def test_batch_grades_correct_folder_and_zip_fully_and_stubs_at_zero(graded_class):
    _, out, _ = graded_class
    rows = read_rows(out)
    for sid in ("ana", "cy"):
        assert float(rows[sid]["total"]) == MAX_TOTAL, rows[sid]
    assert all(float(rows["ben"][q]) == 0 for q in QUESTION_IDS)


def test_a_hang_costs_only_the_questions_that_call_it(graded_class):
    _, out, _ = graded_class
    eve = read_rows(out)["eve"]
    assert eve["status"] == "timeout"
    assert float(eve["softmax"]) < 6
    for q in ("split_heads", "merge_heads", "distinct_head_pairs", "q1", "challenge"):
        assert eve[q] == read_rows(out)["ana"][q]


def test_rerun_grades_only_new_or_changed_submissions(graded_class, tmp_path):
    subs, out, _ = graded_class
    again = run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    assert (again.graded, again.skipped) == (0, 5)

    with open(subs / "ana" / "answers.md", "a") as f:
        f.write("\nOne more sentence.\n")
    correct(subs / "fay")
    changed = run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    assert (changed.graded, changed.skipped) == (2, 4)
    assert sorted(read_rows(out)) == ["ana", "ben", "cy", "dee", "eve", "fay"]


def test_regrade_grades_everything_again(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    correct(subs / "ana")
    zipped(subs / "cy.zip")
    run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    before = {p: p.stat().st_mtime_ns for p in (out / "students").glob("*/" + SEAL)}
    result = run_batch_grading(subs, out, jobs=1, regrade=True, show_progress=False, limits=LIMITS)
    assert result.skipped == 0 and result.graded == len(before)
    after = {p: p.stat().st_mtime_ns for p in before}
    assert all(after[p] > before[p] for p in before)


def test_submissions_that_give_one_id_are_all_graded_under_distinct_ids(tmp_path):
    correct(tmp_path / "ana")
    zipped(tmp_path / "ana.zip")
    correct(tmp_path / "Ana")  # the same folder as ana/ on a case-insensitive disk
    correct(tmp_path / "ana-2")  # an id the suffix must not collide with
    found, warnings = find_submissions(tmp_path)
    # In name order, the first keeps its id; the others get the next free suffix.
    assert {sid: path.name for sid, path in found.items()} == {
        "Ana": "Ana",
        "ana-3": "ana",
        "ana-2": "ana-2",
        "ana-4": "ana.zip",
    }
    assert sum("both give the student id" in w for w in warnings) == 2


def test_interrupted_batch_loses_nothing_and_resumes(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    n = 40  # enough that the batch cannot finish between the check below and the signal
    for i in range(n):
        correct(subs / f"s{i:02d}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mha_grader.cli", "batch", str(subs), "-o", str(out), "-j", "1"]
    # As from a terminal: Ctrl-C's SIGINT is not ignored (a shell's background job would be).
    restore_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=restore_sigint
    )
    deadline = time.monotonic() + 120
    while len(list(out.glob("students/*/" + SEAL))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    sealed = {p.parent.name for p in out.glob("students/*/" + SEAL)}
    assert 2 <= len(sealed) < n
    assert list(out.rglob("*.tmp")) == []  # no half-written file
    assert set(read_rows(out)) == sealed  # the sheet lists exactly what was finished

    resumed = run_batch_grading(subs, out, jobs=1, show_progress=False, limits=LIMITS)
    assert resumed.skipped == len(sealed) and resumed.graded == n - len(sealed)
    assert all(float(r["total"]) == MAX_TOTAL for r in read_rows(out).values())


START_METHOD = """
import sys, threading
from mha_grader.runs.batch import _start_method
if sys.argv[1] == "thread":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
if sys.argv[1] == "torch":
    import torch
print(_start_method())
"""


@pytest.mark.parametrize(
    ("state", "method"), [("alone", "fork"), ("thread", "spawn"), ("torch", "spawn")]
)
def test_grading_processes_are_forked_only_from_a_single_threaded_process_without_torch(
    state, method
):
    done = subprocess.run(
        [sys.executable, "-c", START_METHOD, state], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == method
