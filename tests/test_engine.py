"""The engine end to end: what a submission's files cost, grader failures, reuse, the CLI."""

from __future__ import annotations

import csv
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES, WRITTEN_QUESTIONS
from mha_grader import cli
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outcomes import TestResult as Result
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits, SandboxError

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=2.0, import_timeout=2.0, submission_timeout=30.0)
CROSSCHECK_QUESTIONS = [q for q, f in CODE_QUESTIONS.items() if f == "crosscheck.py"]


def one_point_each(text: str | None) -> list[Result]:
    return [Result(f"{q}: stand-in", q, 1.0 if text else 0.0, POINTS[q]) for q in WRITTEN_QUESTIONS]


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS, grade_written=one_point_each) as e:
        yield e


def folder_from(tmp_path: Path, source: Path, name: str, drop: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file in STUDENT_FILES:
        if file not in drop:
            shutil.copy(source / file, folder / file)
    return folder


def test_untouched_stubs_score_nothing_and_say_not_attempted(engine, tmp_path):
    g = engine.grade(load_submission(folder_from(tmp_path, ROOT / "exercises", "stubs")))
    assert all(g.scores()[q] == 0 for q in CODE_QUESTIONS)
    code = [r for r in g.results if r.question in CODE_QUESTIONS]
    assert code and all("not attempted" in r.output for r in code)
    assert g.status == "ok"


def test_a_missing_crosscheck_costs_only_its_questions(engine, tmp_path):
    folder = folder_from(tmp_path, ROOT / "solutions", "nocc", drop=("crosscheck.py",))
    g = engine.grade(load_submission(folder))
    scores = g.scores()
    assert all(scores[q] == 0 for q in CROSSCHECK_QUESTIONS)
    assert all(scores[q] == POINTS[q] for q in CODE_QUESTIONS if q not in CROSSCHECK_QUESTIONS)
    assert all(scores[q] == 1.0 for q in WRITTEN_QUESTIONS)
    assert g.status == "missing-files"
    outputs = [r.output for r in g.results if r.question == "cross_check"]
    assert all("crosscheck.py is missing" in out for out in outputs)


def test_a_missing_answers_file_costs_only_the_written_questions(engine, tmp_path):
    folder = folder_from(tmp_path, ROOT / "solutions", "noans", drop=("answers.md",))
    g = engine.grade(load_submission(folder))
    assert all(g.scores()[q] == POINTS[q] for q in CODE_QUESTIONS)
    assert all(g.scores()[q] == 0 for q in WRITTEN_QUESTIONS)


def test_a_failure_of_the_grader_itself_is_flagged_for_review_not_blamed_on_the_student(tmp_path):
    def broken_runner(qid, env):
        raise RuntimeError("bug in a hidden test")

    folder = folder_from(tmp_path, ROOT / "solutions", "victim")
    with Engine(LIMITS, run_question=broken_runner, grade_written=one_point_each) as engine:
        g = engine.grade(load_submission(folder))
    assert g.status == "grader-error" and g.needs_review
    assert all("grader itself failed" in r.output for r in g.results if r.question == "softmax")
    assert all(g.scores()[q] == 1.0 for q in WRITTEN_QUESTIONS)


def test_the_engine_grades_several_submissions_at_once_from_threads(engine, tmp_path):
    folders = [folder_from(tmp_path, ROOT / "solutions", f"s{i}") for i in range(3)]
    grades = {}

    def grade(folder: Path) -> None:
        grades[folder.name] = engine.grade(load_submission(folder))

    threads = [threading.Thread(target=grade, args=(f,)) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(grades) == ["s0", "s1", "s2"]
    assert all(g.scores() == grades["s0"].scores() for g in grades.values())
    assert all(g.scores()[q] == POINTS[q] for g in grades.values() for q in CODE_QUESTIONS)


def test_mha_grade_one_writes_the_contract_layout_and_keeps_other_rows(tmp_path, capsys):
    out = tmp_path / "out"
    first = folder_from(tmp_path, ROOT / "solutions", "ada")
    second = folder_from(tmp_path, ROOT / "exercises", "bob")
    assert cli.main(["one", str(first), "-o", str(out)]) == 0
    assert cli.main(["one", str(second), "-o", str(out)]) == 0
    assert "bob:" in capsys.readouterr().out
    with open(out / "grades.csv", newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"ada", "bob"}
    assert float(rows["ada"]["softmax"]) == POINTS["softmax"]
    assert float(rows["bob"]["softmax"]) == 0
    data = json.loads((out / "students" / "ada" / "results.json").read_text())
    assert data["score"] == pytest.approx(float(rows["ada"]["total"]))
    assert (out / "students" / "bob" / "feedback.md").read_text().startswith("# Feedback for bob")


def test_mha_grade_one_explains_a_path_that_is_not_a_submission(tmp_path, capsys):
    assert cli.main(["one", str(tmp_path / "nowhere"), "-o", str(tmp_path / "out")]) == 2
    assert "not a submission folder or .zip" in capsys.readouterr().err


def test_a_sandbox_that_dies_mid_grading_is_a_grader_error_and_is_restarted(tmp_path):
    folder = folder_from(tmp_path, ROOT / "solutions", "unlucky")
    lost = []

    def runner_that_loses_the_sandbox(qid, env):
        if qid == "merge_heads" and not lost:
            lost.append(qid)
            engine._zygote._proc.kill()  # the grader's own sandbox dies, not the student's code
            for _ in range(200):  # its worker dies with it, a moment later
                try:
                    env["softmax"]([[0.0]])  # a test that swallows the failure...
                except SandboxError:
                    break
                except Exception:
                    pass
                time.sleep(0.02)
        return [Result(f"{qid}: ok", qid, POINTS[qid], POINTS[qid], "passed")]

    engine = Engine(
        LIMITS, run_question=runner_that_loses_the_sandbox, grade_written=one_point_each
    )
    with engine:
        g = engine.grade(load_submission(folder))
        assert g.status == "grader-error" and g.needs_review  # ...must not hide it
        assert g.scores()["split_heads"] == POINTS["split_heads"]
        assert g.scores()["merge_heads"] == 0
        again = engine.grade(load_submission(folder))
        assert again.status == "ok"


def test_a_sandbox_that_collapses_its_heap_while_idle_grades_as_one_that_does_not(engine, tmp_path):
    """A large batch's sandbox backs its heap with huge pages between requests: the requests
    that arrive meanwhile (every worker of these grades) are served as by any other."""
    folders = [folder_from(tmp_path, ROOT / d, d) for d in ("solutions", "exercises")]
    expected = [engine.grade(load_submission(f)).scores() for f in folders]
    with Engine(LIMITS, grade_written=one_point_each, collapse=True) as collapsing:
        got = [collapsing.grade(load_submission(f)).scores() for f in folders * 2]
    assert got == expected * 2
    assert all(got[0][q] == POINTS[q] for q in CODE_QUESTIONS)  # the reference's code


@pytest.mark.skipif(os.geteuid() != 0, reason="per-worker folders are their own tmpfs as root")
def test_a_worker_that_cannot_be_set_up_is_a_grader_error_not_the_students(tmp_path):
    folder = folder_from(tmp_path, ROOT / "solutions", "blameless")
    no_room = Limits(call_timeout=2.0, disk_bytes=1024)  # the student's files do not fit
    with Engine(no_room, grade_written=one_point_each) as engine:
        g = engine.grade(load_submission(folder))
    assert g.status == "grader-error" and g.needs_review
    assert all("grader itself failed" in r.output for r in g.results if r.question == "softmax")


def test_changing_an_input_in_place_in_the_sandbox_costs_only_the_unmodified_case(engine, tmp_path):
    folder = folder_from(tmp_path, ROOT / "solutions", "inplace")
    src = (folder / "multihead.py").read_text()
    shift = "    shifted = x - np.max(x, axis=axis, keepdims=True)\n"
    assert shift in src
    in_place = "    x -= np.max(x, axis=axis, keepdims=True)  # writes into the caller's array\n"
    (folder / "multihead.py").write_text(src.replace(shift, in_place + "    shifted = x\n"))
    g = engine.grade(load_submission(folder))
    lost = [r for r in g.results if not r.passed and r.question in CODE_QUESTIONS]
    assert [r.question for r in lost] == ["softmax"], [(r.name, r.output) for r in lost]
    assert "unmodified" in lost[0].name
    assert "changed an input array in place" in lost[0].output


def test_converting_the_callers_module_in_the_sandbox_costs_only_the_unmodified_case(
    engine, tmp_path
):
    folder = folder_from(tmp_path, ROOT / "solutions", "converts")
    src = (folder / "crosscheck.py").read_text()
    read = "    d = mha.embed_dim\n"
    assert src.count(read) == 1
    converts = "    mha.double()  # converts the caller's module in place\n"
    (folder / "crosscheck.py").write_text(src.replace(read, converts + read))
    g = engine.grade(load_submission(folder))
    lost = [r for r in g.results if not r.passed and r.question in CODE_QUESTIONS]
    assert [r.question for r in lost] == ["weights_from_torch"], [(r.name, r.output) for r in lost]
    assert "unmodified" in lost[0].name and "mha.double()" in lost[0].output


def test_numpys_own_exceptions_are_named_as_numpys_and_a_students_class_is_never_named(
    engine, tmp_path
):
    """Told by the class's identity in the worker: a class of the student's that derives from
    NumPy's, or claims NumPy's module and name, is the student's own."""
    folder = folder_from(tmp_path, ROOT / "solutions", "axes")
    src = (folder / "multihead.py").read_text()
    src += (
        "\n\nclass AxisError(np.exceptions.AxisError):\n    pass\n\n\n"
        "Dressed = type('AxisError', (ValueError,), {'__module__': 'numpy.exceptions'})\n\n\n"
        "def merge_heads(H):\n    raise AxisError('no')\n\n\n"
        "def distinct_head_pairs(weights, atol=1e-6):\n    raise Dressed('no')\n\n\n"
        "def split_heads(M, num_heads, d_head):\n    return np.swapaxes(M, 2, 3)\n\n\n"
        "def softmax(x, axis=-1):\n    return [][1]\n"
    )
    (folder / "multihead.py").write_text(src)
    g = engine.grade(load_submission(folder))
    said = {q: {r.output for r in g.results if r.question == q} for q in CODE_QUESTIONS}
    assert all(o.startswith("raised NumPy's AxisError") for o in said["split_heads"]), said
    assert all(o.startswith("raised Python's IndexError") for o in said["softmax"]), said
    for q in ("merge_heads", "distinct_head_pairs"):
        assert all(o.startswith("raised an exception of your own class") for o in said[q]), said
    assert "NumPy's AxisError" not in " ".join(said["merge_heads"] | said["distinct_head_pairs"])


def _syntax_error_submission(tmp_path: Path, files: tuple[str, ...]) -> Path:
    folder = folder_from(tmp_path, Path("solutions"), "typo")
    for name in files:
        with open(folder / name, "a") as f:
            f.write("\n\ndef oops(:\n    pass\n")
    return folder


@pytest.mark.parametrize("files", [("multihead.py",), ("multihead.py", "crosscheck.py")])
def test_a_file_that_does_not_compile_is_told_as_its_import_would_tell_it_without_a_worker(
    engine, tmp_path, monkeypatch, files
):
    from mha_grader.grading import session as session_module
    from mha_grader.sandbox import zygote as zygote_module

    submission = load_submission(_syntax_error_submission(tmp_path, files))
    monkeypatch.setattr(session_module, "COMPILE_HERE_CHARS", 0)  # the worker's own import
    by_worker = engine.grade(submission)
    monkeypatch.undo()
    spawned = []
    spawn = zygote_module._spawn
    monkeypatch.setattr(
        zygote_module, "_spawn", lambda *a, **k: spawned.append(1) or spawn(*a, **k)
    )
    here = engine.grade(submission)
    assert [(r.name, r.score, r.output) for r in here.results] == [
        (r.name, r.score, r.output) for r in by_worker.results
    ]
    assert here.status == by_worker.status == "import-error"
    # crosscheck.py alone still loads in one worker; with both files broken, none starts
    assert len(spawned) == (1 if files == ("multihead.py",) else 0)
    assert "line" in next(r.output for r in here.results if r.question == "softmax")


def test_a_submission_none_of_whose_files_import_starts_one_worker_per_file_and_no_more(
    engine, tmp_path, monkeypatch
):
    from mha_grader.sandbox import zygote as zygote_module

    folder = folder_from(tmp_path, ROOT / "solutions", "raises")
    for name in ("multihead.py", "crosscheck.py"):
        text = (folder / name).read_text()
        future = "from __future__ import annotations\n"
        (folder / name).write_text(text.replace(future, future + "raise RuntimeError('wip')\n"))
    spawned = []
    spawn = zygote_module._spawn
    monkeypatch.setattr(
        zygote_module, "_spawn", lambda *a, **k: spawned.append(1) or spawn(*a, **k)
    )
    grade = engine.grade(load_submission(folder))
    assert grade.status == "import-error"
    assert all(r.score == 0 for r in grade.results if r.question in CODE_QUESTIONS)
    for q in ("softmax", "cross_check"):
        assert "RuntimeError" in next(r.output for r in grade.results if r.question == q)
    # Each import is tried in a worker of its own (a half-imported file is not kept); once
    # neither file is left, no further worker starts.
    assert len(spawned) == 2
