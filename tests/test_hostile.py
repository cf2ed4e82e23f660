"""The project's own hostile submissions (tests/hostile/) against the real hidden tests.

None may gain a point it did not earn, see a hidden line, write outside its sandbox or stop the
grader. One engine (one zygote) serves the whole module, with short time limits, in the
strongest layer this machine allows; ``tests/test_layers.py`` runs this file again in a kernel
that refuses namespaces (uid layer as root, limits as nobody; with and without Landlock). Where
an outcome differs by layer, the test says so; docs/containment.md lists what each layer cannot
stop.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES, WRITTEN_QUESTIONS
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outcomes import Grade
from mha_grader.outcomes import TestResult as Result
from mha_grader.outputs import reports
from mha_grader.outputs.folder import OutputFolder
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits
from mha_grader.sandbox.zygote import worker_uids

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"
SOLUTIONS = ROOT / "solutions"
FAST = Limits(call_timeout=1.0, import_timeout=1.0, submission_timeout=30.0, memory_bytes=512 << 20)
MULTIHEAD_QUESTIONS = [q for q, f in CODE_QUESTIONS.items() if f == "multihead.py"]


def stand_in_written(text: str | None) -> list[Result]:
    """Written answers are not what these tests are about: 1 point each if present."""
    return [Result(f"{q}: stand-in", q, 1.0 if text else 0.0, POINTS[q]) for q in WRITTEN_QUESTIONS]


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=FAST, grade_written=stand_in_written) as e:
        yield e


def open_to_its_user(engine: Engine) -> bool:
    """The limits layer without Landlock: student code can do what the grader's user can."""
    return engine.layer.trusted_readable


def build(tmp_path: Path, name: str, **placeholders: str) -> Path:
    """A submission folder: the reference files with the attack in tests/hostile/<name>."""
    folder = tmp_path / name
    folder.mkdir()
    for file in STUDENT_FILES:
        (folder / file).write_text((SOLUTIONS / file).read_text())
    for attack in (HOSTILE / name).iterdir():
        text = attack.read_text()
        for key, value in placeholders.items():
            text = text.replace(f"__{key}__", value)
        if text.startswith("# append-to-solution"):
            text = (SOLUTIONS / attack.name).read_text() + "\n\n" + text
        (folder / attack.name).write_text(text)
    return folder


def grade(engine: Engine, folder: Path) -> Grade:
    return engine.grade(load_submission(folder))


def hidden_code_lines() -> set[str]:
    """Lines of hidden test code (no string literals) that must never reach a report."""
    lines = set()
    for path in (ROOT / "autograder" / "tests").glob("*.py"):
        for line in path.read_text().splitlines():
            line = line.strip()
            if len(line) > 25 and not any(q in line for q in "\"'#"):
                lines.add(line)
    assert lines, "expected hidden test files to compare against"
    return lines


def assert_reports_clean(grade_: Grade, tmp_path: Path) -> str:
    """Write the reports and check that no hidden test line is in them; returns the text."""
    folder = OutputFolder(tmp_path / "out").write_reports(grade_)
    text = (folder / "feedback.md").read_text() + (folder / "results.json").read_text()
    leaked = [line for line in hidden_code_lines() if line in text]
    assert leaked == []
    return text


def full_marks(g: Grade, qids) -> bool:
    scores = g.scores()
    return all(scores[q] == POINTS[q] for q in qids)


def test_a_copy_of_the_solutions_gets_full_marks_on_every_code_question(engine, tmp_path):
    folder = tmp_path / "correct"
    folder.mkdir()
    for file in STUDENT_FILES:
        (folder / file).write_text((SOLUTIONS / file).read_text())
    g = grade(engine, folder)
    assert g.status == "ok"
    assert full_marks(g, CODE_QUESTIONS)


def test_loop_at_import_costs_that_files_questions_only(engine, tmp_path):
    g = grade(engine, build(tmp_path, "import_loop"))
    scores = g.scores()
    assert all(scores[q] == 0 for q in MULTIHEAD_QUESTIONS)
    assert scores["weights_from_torch"] == POINTS["weights_from_torch"]  # crosscheck.py still runs
    assert g.status == "timeout"
    assert any("multihead.py" in note and "time" in note for note in g.notes)
    assert_reports_clean(g, tmp_path)


def test_loop_in_a_call_costs_the_functions_that_hang_only(engine, tmp_path):
    g = grade(engine, build(tmp_path, "call_loop"))
    scores = g.scores()
    assert scores["softmax"] == 0
    assert full_marks(g, ["split_heads", "merge_heads", "parameter_counts", "weights_from_torch"])
    assert g.status == "timeout"
    softmax_outputs = [r.output for r in g.results if r.question == "softmax"]
    assert all("time" in out for out in softmax_outputs)


def test_a_function_that_hung_in_one_worker_is_not_waited_for_again_in_the_other(engine):
    """multi_head_attention runs in the NumPy worker for its own question and beside torch for
    cross_check's: once it has used up a call's time limit in one, it is not run again in the
    other (the same code: one limit's wait for it, not one per worker)."""
    code = (SOLUTIONS / "multihead.py").read_text()
    code += "\n\ndef multi_head_attention(*args, **kwargs):\n    while True:\n        pass\n"
    files = {"multihead": code, "crosscheck": (SOLUTIONS / "crosscheck.py").read_text()}
    with engine.open_session(files) as session:
        mha = engine.question_results("multi_head_attention", session.env(), session)
        beside_torch = session.env("cross_check")  # as the engine grades cross_check
        cross = engine.question_results("cross_check", beside_torch, session)
        timeouts = list(session.log.timeouts)
    assert sum(r.score for r in mha) == 0 and sum(r.score for r in cross) == 0
    assert timeouts.count("multi_head_attention") == 1, timeouts
    said = " ".join(r.output for r in cross)
    assert "ran out of time on an earlier case" in said


def test_os_exit_and_sys_exit_in_a_call_cost_those_functions_only(engine, tmp_path):
    g = grade(engine, build(tmp_path, "exits"))
    scores = g.scores()
    assert scores["split_heads"] == 0 and scores["merge_heads"] == 0
    assert full_marks(g, ["softmax", "attention", "parameter_counts", "weights_from_torch"])
    assert g.status == "crashed"
    split_outputs = " ".join(r.output for r in g.results if r.question == "split_heads")
    assert "the process exited" in split_outputs and "status 3" not in split_outputs


def test_memory_exhaustion_is_contained_and_costs_that_function(engine, tmp_path):
    g = grade(engine, build(tmp_path, "memory"))
    assert g.scores()["softmax"] == 0
    assert full_marks(g, ["split_heads", "merge_heads", "parameter_counts"])


def _worker_processes() -> list[int]:
    """Processes running as one of this grader's worker uids, anywhere on this machine."""
    found, ours = [], worker_uids()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as f:
                    uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
                if uid in ours:
                    found.append(int(entry))
            except (OSError, StopIteration):
                pass
    return found


def _zygote_descendants(engine: Engine) -> list[int]:
    """What still runs under the zygote (which reaps every orphan of a worker), but its own
    helper that kills uids (running as root, never as a worker) and the NumPy questions'
    zygote (which reaps its own workers' orphans)."""
    import psutil

    zygote = psutil.Process(engine._zygote._proc.pid)
    numpy_zygote = engine._zygote.numpy_pid
    return [
        p.pid
        for p in zygote.children(recursive=True)
        if p.uids().real != 0 and p.pid != numpy_zygote
    ]


def test_fork_bomb_is_limited_and_its_whole_tree_is_killed(engine, tmp_path):
    g = grade(engine, build(tmp_path, "fork_bomb"))
    assert g.scores()["softmax"] == 0
    assert full_marks(g, ["split_heads", "merge_heads"])
    engine.wait_idle()
    if engine.layer.per_worker_uid:
        assert _worker_processes() == []
    if engine.layer.name != "namespaces":  # no pid namespace: killed by process group
        assert _zygote_descendants(engine) == []


def test_output_flood_is_truncated_and_call_output_is_never_shown(engine, tmp_path):
    g = grade(engine, build(tmp_path, "output_flood"))
    assert full_marks(g, CODE_QUESTIONS)
    assert len(g.output) < FAST.output_bytes + 200
    text = assert_reports_clean(g, tmp_path)
    assert "y" * 100 not in text  # printed inside softmax, during the hidden tests
    assert any("not shown" in note for note in g.notes)
    assert len(text) < 200_000


def test_reading_solutions_or_hidden_tests_by_path_import_or_search_finds_nothing(engine, tmp_path):
    folder = build(tmp_path, "snoop", CHECKOUT=str(ROOT))
    files = {"multihead": (folder / "multihead.py").read_text()}
    patient = Limits(import_timeout=120.0, submission_timeout=240.0)  # it walks every folder
    with engine.open_session(files, limits=patient) as session:
        assert session.broken == {}
        found = session.call("multihead", "findings", (), {})
    if engine.layer.name == "namespaces":
        assert found == []
    elif open_to_its_user(engine):  # docs/containment.md: limits without Landlock cannot stop this
        assert f"content {ROOT / 'solutions' / 'multihead.py'}" in found
    elif engine.layer.landlock:  # the checkout is there: that a path exists shows, no more
        assert [f for f in found if not f.startswith("path ")] == []
    else:  # uid without Landlock: the machine is visible, but nothing of this grader's

        def ours(finding: str) -> bool:
            path = finding.split(" ", 1)[1]
            return any(path == str(p) or path.startswith(f"{p}/") for p in (ROOT, tmp_path))

        assert [f for f in found if ours(f) and not f.startswith("path ")] == []
        assert all("import" not in f for f in found)


def test_forged_results_and_grade_sheet_are_never_written_outside_the_sandbox(engine, tmp_path):
    out = tmp_path / "out"
    folder = build(tmp_path, "forge", OUT=str(out), CHECKOUT=str(ROOT))
    before = set(tmp_path.rglob("*"))
    g = grade(engine, folder)
    assert g.scores()["softmax"] == 0
    engine.wait_idle()
    if open_to_its_user(engine):  # docs/containment.md: limits without Landlock cannot stop this...
        assert (ROOT / "results.json").exists()
        for forged in (ROOT / "results.json", ROOT / "grades.csv"):
            forged.unlink()
    else:
        assert set(tmp_path.rglob("*")) == before  # nothing appeared next to the submission
        assert not (ROOT / "results.json").exists() and not (ROOT / "grades.csv").exists()
        for shared in ("/tmp", "/dev/shm"):  # where a uid of its own may write: cleaned up
            owners = [e.stat(follow_symlinks=False).st_uid for e in os.scandir(shared)]
            assert [uid for uid in owners if uid in worker_uids()] == []
    OutputFolder(out).write_reports(g)  # ...but what the grader writes is its own
    OutputFolder(out).write_grades([reports.grade_row(g)])
    data = json.loads((out / "students" / "forge" / "results.json").read_text())
    assert data["score"] == pytest.approx(g.total, abs=1e-3) and g.total < g.max_total
    assert OutputFolder(out).read_grades()[0]["total"] == reports.points(g.total)
    if not open_to_its_user(engine):
        assert not (out / "students" / "forge" / "grades.csv").exists()


def test_monkeypatched_numpy_comparisons_do_not_turn_wrong_answers_right(engine, tmp_path):
    g = grade(engine, build(tmp_path, "monkeypatch"))
    scores = g.scores()
    assert scores["softmax"] == 0 and scores["split_heads"] == 0
    assert full_marks(g, ["merge_heads", "parameter_counts"])


def test_killing_its_parent_fails_and_the_grader_carries_on(engine, tmp_path):
    folder = build(tmp_path, "kill_parent")
    with engine.open_session({"multihead": (folder / "multihead.py").read_text()}) as session:
        attempts = session.call("multihead", "attempts", (), {})
    if engine.layer.per_worker_uid or engine.layer.name != "namespaces":
        # a uid of its own, or a seccomp filter or Landlock: it may signal only its own group
        assert [a.split(": ")[1] for a in attempts[:2]] == ["PermissionError"] * 2
    g = grade(engine, folder)
    assert full_marks(g, CODE_QUESTIONS)
    assert g.status == "ok"


def test_no_network_not_even_the_grading_machines_loopback(engine, tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    connections = []
    threading.Thread(target=lambda: _accept(server, connections), daemon=True).start()
    port = server.getsockname()[1]
    folder = build(tmp_path, "network", PORT=str(port))
    try:
        with engine.open_session({"multihead": (folder / "multihead.py").read_text()}) as s:
            assert s.call("multihead", "reach", (), {}) == []
    finally:
        server.close()
    assert connections == []


def _accept(server: socket.socket, connections: list) -> None:
    try:
        connections.append(server.accept())
    except OSError:
        pass


def test_objects_that_claim_equality_with_everything_earn_nothing(engine, tmp_path):
    g = grade(engine, build(tmp_path, "liar"))
    scores = g.scores()
    assert scores["softmax"] == 0 and scores["merge_heads"] == 0
    assert scores["parameter_counts"] < POINTS["parameter_counts"]
    outputs = " ".join(r.output for r in g.results if r.question == "softmax")
    assert "not plain data" in outputs


def test_pickle_payloads_are_never_unpickled(engine, tmp_path):
    marker = tmp_path / "unpickled"
    g = grade(engine, build(tmp_path, "pickle_payload", MARKER=str(marker)))
    assert not marker.exists()
    scores = g.scores()
    assert scores["softmax"] == 0 and scores["split_heads"] == 0 and scores["merge_heads"] == 0
    # The raw frame written onto the channel is a protocol violation: the session ends there.
    assert g.status == "protocol-error" and all(scores[q] == 0 for q in CODE_QUESTIONS)


def test_zip_with_climbing_paths_is_graded_without_writing_anything(engine, tmp_path):
    archive = tmp_path / "zipper.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for file in STUDENT_FILES:
            zf.writestr(f"exercises/{file}", (SOLUTIONS / file).read_text())
        zf.writestr("../escaped.py", "print('out')")
        zf.writestr("/tmp/absolute.py", "print('abs')")
        zf.writestr("exercises/../../multihead.py", "raise SystemExit")
    before = set(tmp_path.parent.iterdir())
    g = grade(engine, archive)
    assert set(tmp_path.parent.iterdir()) == before
    assert g.student == "zipper"
    assert full_marks(g, CODE_QUESTIONS)
    assert any("ignored" in note for note in g.notes)


def test_invalid_utf8_costs_that_files_questions_and_says_why(engine, tmp_path):
    folder = tmp_path / "latin"
    folder.mkdir()
    for file in STUDENT_FILES:
        (folder / file).write_text((SOLUTIONS / file).read_text())
    (folder / "multihead.py").write_bytes(
        b"# caf\xe9\n" + (SOLUTIONS / "multihead.py").read_bytes()
    )
    g = grade(engine, folder)
    scores = g.scores()
    assert all(scores[q] == 0 for q in MULTIHEAD_QUESTIONS)
    assert scores["weights_from_torch"] == POINTS["weights_from_torch"]
    assert sum(scores[q] for q in WRITTEN_QUESTIONS) > 0  # written answers graded regardless
    assert g.status == "unreadable-files"
    assert any("UTF-8" in r.output for r in g.results if r.question == "softmax")


def test_a_syntax_error_is_reported_with_file_and_line(engine, tmp_path):
    folder = tmp_path / "typo"
    folder.mkdir()
    for file in STUDENT_FILES:
        (folder / file).write_text((SOLUTIONS / file).read_text())
    with open(folder / "multihead.py", "a") as f:
        f.write("\ndef broken(:\n    pass\n")
    g = grade(engine, folder)
    assert g.status == "import-error"
    line = len((SOLUTIONS / "multihead.py").read_text().splitlines()) + 2
    outputs = " ".join(r.output for r in g.results if r.question == "softmax")
    assert f"multihead.py, line {line}" in outputs
    assert g.scores()["weights_from_torch"] == POINTS["weights_from_torch"]


def test_hidden_inputs_smuggled_into_messages_output_or_files_never_reach_the_feedback(
    engine, tmp_path
):
    g = grade(engine, build(tmp_path, "leak"))
    assert g.scores()["softmax"] == 0
    assert_reports_clean(g, tmp_path)
    shown = [r.output for r in g.results] + g.notes + [g.output, reports.feedback_md(g)]
    text = "\n".join(shown)
    assert re.search(r"\d\.\d{6}", text) is None  # the attack writes inputs with 6 decimals
    assert "stashed: " not in text  # what a restarted worker printed from its stash


def test_with_a_shared_worker_uid_killing_the_zygote_is_a_grader_error_and_recovered(
    engine, tmp_path
):
    """What the namespaces layer gives a grader not run as root: weaker, but never a wrong
    grade or a stuck run. (Without namespaces, seccomp keeps the worker from signalling.)"""
    if engine.layer.name != "namespaces":
        pytest.skip("a worker sharing the zygote's uid is refused kill() outside namespaces")
    with Engine(FAST, grade_written=stand_in_written, privileged=False) as shared:
        g = grade(shared, build(tmp_path, "kill_parent"))
        assert g.status == "grader-error" and g.needs_review
        correct = grade(shared, build(tmp_path, "output_flood"))
        assert correct.status == "ok" and full_marks(correct, CODE_QUESTIONS)
