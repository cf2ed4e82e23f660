"""The cluster job files the README points to: scripts/slurm/grade.sbatch and
scripts/k8s/grade-job.yaml.

Each is run here with a stand-in for mha-grade that records its command line, in the
environment its scheduler gives a task; the command line must be one `mha-grade batch` accepts,
into a folder of the task's own, with `--shard auto` reading that task's part. (A real Slurm
runs the script in tests/test_slurm.py; no Kubernetes cluster runs the manifest.)
"""

import argparse
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from mha_grader.cli.batch import add_arguments as add_batch_arguments
from mha_grader.runs import shards

ROOT = Path(__file__).resolve().parent.parent
SBATCH = ROOT / "scripts" / "slurm" / "grade.sbatch"
MANIFEST = ROOT / "scripts" / "k8s" / "grade-job.yaml"
SCHEDULER_VARIABLE = re.compile(r"SLURM_.*|SBATCH_.*|JOB_COMPLETION_INDEX|MHA_.*")


def stub(folder: Path) -> Path:
    """An `mha-grade` that writes its arguments, one a line, to $STUB_ARGS."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mha-grade"
    path.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$STUB_ARGS"\n')
    path.chmod(0o755)
    return path


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not SCHEDULER_VARIABLE.fullmatch(k)}
    return {**env, **extra}


def batch_args(recorded: Path) -> argparse.Namespace:
    argv = recorded.read_text().splitlines()
    assert argv[0] == "batch", argv
    parser = argparse.ArgumentParser()
    add_batch_arguments(parser)
    return parser.parse_args(argv[1:])


# -- Slurm ---------------------------------------------------------------------------------------


def slurm_task(task: int, first: int, count: int) -> dict[str, str]:
    return {
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_MIN": str(first),
        "SLURM_ARRAY_TASK_STEP": "1",
        "SLURM_ARRAY_TASK_COUNT": str(count),
    }


def test_the_sbatch_script_runs_the_checkouts_mha_grade_on_its_tasks_part_into_its_own_folder(
    tmp_path,
):
    checkout = tmp_path / "checkout"  # where sbatch ran: the script's default project
    stub(checkout / ".venv" / "bin")
    task = slurm_task(5, 4, 3)
    env = clean_env(
        **task,
        SLURM_SUBMIT_DIR=str(checkout),
        SLURM_CPUS_PER_TASK="2",
        STUB_ARGS=str(tmp_path / "args"),
    )
    done = subprocess.run(
        ["bash", str(SBATCH), "subs", "out", "--require-sandbox", "uid"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    args = batch_args(tmp_path / "args")
    assert args.submissions == Path("subs")
    assert args.out == Path("out/task-5")
    assert shards.parse(args.shard, task) == shards.Shard(2, 3)
    assert args.jobs == 2 and args.require_sandbox == "uid"


def test_the_sbatch_script_finds_mha_grade_where_its_environment_variables_say(tmp_path):
    stub(tmp_path / "elsewhere" / "bin")
    env = clean_env(
        **slurm_task(1, 1, 1),
        SLURM_SUBMIT_DIR=str(tmp_path / "nothing here"),
        MHA_VENV=str(tmp_path / "elsewhere"),
        STUB_ARGS=str(tmp_path / "args"),
    )
    done = subprocess.run(["bash", str(SBATCH), "s", "o"], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert batch_args(tmp_path / "args").jobs == 1  # no --cpus-per-task: one grading process


@pytest.mark.parametrize(
    "env, says",
    [
        ({}, "not a Slurm array task"),
        ({**slurm_task(1, 1, 2), "SLURM_SUBMIT_DIR": "/nonexistent"}, "set MHA_PROJECT"),
    ],
)
def test_the_sbatch_script_says_in_words_why_it_cannot_start(tmp_path, env, says):
    done = subprocess.run(
        ["bash", str(SBATCH), "s", "o"], env=clean_env(**env), capture_output=True, text=True
    )
    assert done.returncode == 2 and says in done.stderr


def test_the_sbatch_scripts_default_array_is_one_that_shard_auto_splits_evenly():
    directives = [line for line in SBATCH.read_text().splitlines() if line.startswith("#SBATCH")]
    (array,) = [d.split("=", 1)[1] for d in directives if d.startswith("#SBATCH --array=")]
    first, last = map(int, re.fullmatch(r"(\d+)-(\d+)", array).groups())
    count = last - first + 1
    got = [shards.parse("auto", slurm_task(t, first, count)) for t in range(first, last + 1)]
    assert got == [shards.Shard(i, count) for i in range(1, count + 1)]


# -- Kubernetes ----------------------------------------------------------------------------------


def test_the_kubernetes_manifest_is_an_indexed_job_whose_pods_each_grade_their_own_part(
    tmp_path,
):
    job = yaml.safe_load(MANIFEST.read_text())
    spec = job["spec"]
    assert (job["apiVersion"], job["kind"], spec["completionMode"]) == (
        "batch/v1",
        "Job",
        "Indexed",
    )
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    count = spec["completions"]
    assert int(env[shards.COUNT_VARIABLE]) == count  # Kubernetes does not pass it on itself
    bin_dir = stub(tmp_path / "bin").parent
    seen = []
    for index in range(count):  # what each pod runs: its command, in its environment
        pod_env = {**env, "JOB_COMPLETION_INDEX": str(index)}
        run_env = clean_env(**pod_env, PATH=f"{bin_dir}:{os.environ['PATH']}")
        run_env["STUB_ARGS"] = str(tmp_path / f"args-{index}")
        cmd = container["command"] + container["args"]
        done = subprocess.run(cmd, env=run_env, capture_output=True, text=True)
        assert done.returncode == 0, (shlex.join(cmd), done.stderr)
        args = batch_args(tmp_path / f"args-{index}")
        assert args.out.name == f"task-{index}"
        seen.append(shards.parse(args.shard, pod_env))
    assert seen == [shards.Shard(i, count) for i in range(1, count + 1)]


# -- the README points to the files ------------------------------------------------------------


def test_the_docs_point_to_the_job_files_and_carry_no_copy_of_them():
    tops = [d for d in ROOT.iterdir() if d.is_dir() and not d.name.startswith(".")]
    docs = [*ROOT.glob("*.md"), *(p for d in tops for p in d.rglob("*.md"))]
    text = {p: p.read_text() for p in docs}
    for f in (SBATCH, MANIFEST):
        assert any(str(f.relative_to(ROOT)) in t for t in text.values()), f
    for p, t in text.items():
        assert not re.search(r"^\s*#SBATCH", t, re.M), f"{p}: a copy of the job script"
        assert "completionMode" not in t, f"{p}: a copy of the Kubernetes manifest"
