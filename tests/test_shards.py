"""Sharded batches: `--shard I/N|auto` and `mha-grade merge`.

Three shards graded separately and merged give the same grades.csv and summary.md as one batch
of the whole class; the merge refuses what cannot be joined.
"""

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mha_grader.outputs.folder import OutputFolder
from mha_grader.runs.batch import run_batch_grading
from mha_grader.runs.merge import MergeError, merge
from mha_grader.runs.shards import Shard, ShardError, parse, shard_of
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=2.0, submission_timeout=20.0)


# -- which part a student is in ----------------------------------------------------------------


def test_shard_values_are_parsed_and_checked():
    assert parse("2/3") == Shard(2, 3)
    assert parse(" 1 / 1 ") == Shard(1, 1)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/3"):
        with pytest.raises(ShardError):
            parse(bad)


def test_every_student_is_in_exactly_one_shard_and_the_parts_are_balanced():
    ids = [f"student{i:03d}" for i in range(300)]
    parts = [[s for s in ids if Shard(i, 3).holds(s)] for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == ids
    assert all(70 <= len(p) <= 130 for p in parts)
    assert shard_of("ana", 3) == shard_of("ana", 3)


def test_auto_reads_a_slurm_array_relative_to_its_first_index():
    env = {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert parse("auto", env) == Shard(3, 4)
    assert parse("auto", {**env, "SLURM_ARRAY_TASK_ID": "5"}) == Shard(1, 4)
    stepped = {**env, "SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_STEP": "2"}
    assert parse("auto", stepped) == Shard(3, 4)
    with pytest.raises(ShardError, match="not one of 4 evenly spaced tasks"):
        parse("auto", {**env, "SLURM_ARRAY_TASK_ID": "9"})
    with pytest.raises(ShardError, match="SLURM_ARRAY_TASK_MIN"):
        parse("auto", {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"})


def test_auto_reads_a_kubernetes_indexed_job_with_the_count_from_the_manifest():
    assert parse("auto", {"JOB_COMPLETION_INDEX": "0", "MHA_SHARD_COUNT": "3"}) == Shard(1, 3)
    assert parse("auto", {"JOB_COMPLETION_INDEX": "2", "MHA_SHARD_COUNT": "3"}) == Shard(3, 3)
    with pytest.raises(ShardError, match="MHA_SHARD_COUNT"):
        parse("auto", {"JOB_COMPLETION_INDEX": "0"})
    with pytest.raises(ShardError, match="outside"):
        parse("auto", {"JOB_COMPLETION_INDEX": "3", "MHA_SHARD_COUNT": "3"})
    with pytest.raises(ShardError, match="no scheduler"):
        parse("auto", {})


# -- grading in shards and merging ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """One class graded whole, and in three shards merged."""
    tmp = tmp_path_factory.mktemp("shards")
    subs = tmp / "subs"
    subs.mkdir()
    for name in ("alice", "bob", "carol", "dan", "erin", "mallory"):
        shutil.copytree(ROOT / "examples" / "submissions" / name, subs / name)
    shutil.copy(ROOT / "examples" / "submissions" / "frank.zip", subs / "frank.zip")
    shutil.copytree(ROOT / "tests" / "data" / "independent" / "kofi", subs / "kofi")
    shutil.copytree(ROOT / "exercises", subs / "untouched", ignore=shutil.ignore_patterns("tests"))
    whole = tmp / "whole"
    run_batch_grading(subs, whole, jobs=1, show_progress=False, limits=LIMITS)
    parts = []
    for i in (1, 2, 3):
        part = tmp / f"part{i}"
        run_batch_grading(subs, part, jobs=1, show_progress=False, limits=LIMITS, shard=Shard(i, 3))
        parts.append(part)
    merged = tmp / "merged"
    merge(parts, merged)
    return subs, whole, parts, merged


def test_three_merged_shards_give_the_same_grade_sheet_and_summary_as_one_batch(sharded):
    _, whole, parts, merged = sharded
    assert all(OutputFolder(p).read_run()["students"] for p in parts)  # every shard had someone
    assert (merged / "grades.csv").read_text() == (whole / "grades.csv").read_text()
    summary = (whole / "summary.md").read_text()
    assert (merged / "summary.md").read_text() == summary
    assert "## Similar submissions" in summary and "kofi" not in summary.split("## Similar")[1]
    assert (merged / "similarity.json").read_text() == (whole / "similarity.json").read_text()
    for student in ("alice", "frank", "untouched"):
        assert (merged / "students" / student / "feedback.md").read_text() == (
            whole / "students" / student / "feedback.md"
        ).read_text()


def test_a_shard_compares_nothing_and_says_the_merge_will(sharded):
    _, _, parts, _ = sharded
    summary = (parts[0] / "summary.md").read_text()
    assert "Not compared within one shard (1/3)" in summary
    assert not (parts[0] / "similarity.html").exists()


def test_the_merge_records_each_shards_containment_layer(sharded):
    _, _, parts, merged = sharded
    run = OutputFolder(merged).read_run()
    assert [m["shard"] for m in run["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert all(
        m["layer"] == OutputFolder(p).read_run()["layer"]
        for m, p in zip(run["merged_from"], parts, strict=True)
    )


def test_a_rerun_of_a_shard_resumes_and_grades_nothing_twice(sharded):
    subs, _, parts, _ = sharded
    again = run_batch_grading(
        subs, parts[1], jobs=1, show_progress=False, limits=LIMITS, shard=Shard(2, 3)
    )
    assert again.graded == 0 and again.skipped == len(OutputFolder(parts[1]).read_run()["students"])


def _copy_parts(parts, tmp_path):
    copies = []
    for p in parts:
        copies.append(tmp_path / p.name)
        shutil.copytree(p, copies[-1])
    return copies


def _edit_run(folder, **changes):
    run = OutputFolder(folder).read_run()
    run.update(changes)
    OutputFolder(folder).write_run(run)


def test_merge_refuses_shards_graded_by_different_graders(sharded, tmp_path):
    parts = _copy_parts(sharded[2], tmp_path)
    _edit_run(parts[2], fingerprint="0123456789abcdef")
    with pytest.raises(MergeError, match="different hidden tests, rubrics, points"):
        merge(parts, tmp_path / "out")


def test_merge_refuses_a_missing_a_repeated_or_an_unfinished_shard(sharded, tmp_path):
    parts = _copy_parts(sharded[2], tmp_path)
    with pytest.raises(MergeError, match="missing 3/3"):
        merge(parts[:2], tmp_path / "out")
    with pytest.raises(MergeError, match="given twice 1/3"):
        merge([parts[0], parts[0], parts[1], parts[2]], tmp_path / "out")
    _edit_run(parts[1], finished=False)
    with pytest.raises(MergeError, match="did not finish"):
        merge(parts, tmp_path / "out")


def test_merge_refuses_a_student_graded_twice_and_folders_that_are_not_batches(sharded, tmp_path):
    _, whole, parts, _ = sharded
    copies = _copy_parts([whole], tmp_path) + _copy_parts([whole], tmp_path / "b")
    with pytest.raises(MergeError, match="was graded in both"):
        merge(copies, tmp_path / "out")
    with pytest.raises(MergeError, match="no batch.json"):
        merge([tmp_path], tmp_path / "out")
    assert json.loads((parts[0] / "batch.json").read_text())["shard"] == "1/3"


def test_mha_grade_merge_prints_each_shards_layer_and_exits_zero(sharded, tmp_path, capsys):
    from mha_grader import cli

    _, whole, parts, _ = sharded
    assert cli.main(["merge", *map(str, parts), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    for i, part in enumerate(parts, 1):
        assert f"{part}: shard {i}/3, containment layer " in printed
    waiting = sum(r["needs_review"] == "true" for r in OutputFolder(whole).read_grades())
    assert waiting == 1  # the class has a flagged answer: the merge says so, as batch does
    out = tmp_path / "out"
    assert f"waiting for a person's review: 1 student (mha-grade review {out})" in printed
    assert (tmp_path / "out" / "grades.csv").read_text() == (whole / "grades.csv").read_text()
    assert cli.main(["merge", str(parts[0]), "-o", str(tmp_path / "out2")]) == 2
    assert "missing 2/3, 3/3" in capsys.readouterr().err


# -- a shard that did not finish ------------------------------------------------------------------


def slow_student(subs: Path, shard: Shard) -> str:
    """Add to `subs` a copy of alice's submission whose import takes 4 s more, in `shard`: a
    run grading it is certainly under way for that long. Returns its id."""
    sid = next(f"slow{k}" for k in itertools.count() if shard.holds(f"slow{k}"))
    shutil.copytree(ROOT / "examples" / "submissions" / "alice", subs / sid)
    code = subs / sid / "multihead.py"
    code.write_text(code.read_text() + "\n\nimport time  # noqa: E402\n\ntime.sleep(4)\n")
    return sid


def wait_for(condition, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.05)


def test_a_shard_killed_outright_is_named_by_the_merge_and_merges_once_run_again(
    sharded, tmp_path, capsys
):
    from mha_grader import cli

    subs = tmp_path / "subs"
    shutil.copytree(sharded[0], subs)
    parts = _copy_parts(sharded[2], tmp_path)  # three finished shards, as before a rerun
    slow = slow_student(subs, Shard(2, 3))
    cmd = [sys.executable, "-m", "mha_grader.cli", "batch", str(subs), "-o", str(parts[1])]
    cmd += ["--shard", "2/3", "-j", "1"]
    # Its own process group: SIGKILL to the batch and its grading processes at once, as when a
    # node is lost or the kernel's OOM killer strikes (no handler runs, nothing is written).
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        wait_for(
            lambda: slow in OutputFolder(parts[1]).read_run()["students"], "the rerun to start"
        )
        assert proc.poll() is None, "the rerun ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert not (parts[1] / "students" / slow / "grade.json").exists()  # killed mid-run
    out = tmp_path / "out"
    assert cli.main(["merge", *map(str, parts), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{parts[1]} (shard 2/3) did not finish" in err and "--allow-partial" in err
    assert not (out / "grades.csv").exists()

    again = subprocess.run(cmd, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert cli.main(["merge", *map(str, parts), "-o", str(out)]) == 0
    rows = OutputFolder(out).read_grades()
    assert [r["student"] for r in rows] == sorted(
        OutputFolder(sharded[1]).read_run()["students"] + [slow]
    )
    alice = next(r for r in OutputFolder(sharded[1]).read_grades() if r["student"] == "alice")
    assert next(r for r in rows if r["student"] == slow) == {**alice, "student": slow}


def test_allow_partial_merges_the_finished_shards_and_names_what_it_left_out(
    sharded, tmp_path, capsys
):
    from mha_grader import cli

    parts = _copy_parts(sharded[2], tmp_path)
    _edit_run(parts[1], finished=False)
    given = [str(parts[0]), str(parts[1])]  # 3/3 missing, 2/3 unfinished
    out = tmp_path / "out"
    assert cli.main(["merge", *given, "-o", str(out)]) == 2
    assert not (out / "grades.csv").exists()
    capsys.readouterr()

    assert cli.main(["merge", *given, "-o", str(out), "--allow-partial"]) == 3
    err = capsys.readouterr().err
    assert "missing 3/3" in err and f"{parts[1]} (shard 2/3) did not finish" in err
    students = OutputFolder(parts[0]).read_run()["students"]
    assert [r["student"] for r in OutputFolder(out).read_grades()] == students
    run = OutputFolder(out).read_run()
    assert run["finished"] is False and run["students"] == students
    assert [m["shard"] for m in run["merged_from"]] == ["1/3"]
    assert len(run["incomplete"]) == 2
    summary = (out / "summary.md").read_text()
    assert "**Partial:**" in summary and "missing 3/3" in summary
    assert f"{len(students)} submissions graded." in summary

    # what a partial merge wrote is not a finished run either: merging it again is refused
    assert cli.main(["merge", str(out), "-o", str(tmp_path / "again")]) == 2
    assert "did not finish" in capsys.readouterr().err
