"""The README's Slurm job array on a real Slurm: scripts/slurm/grade.sbatch, submitted with sbatch.

A single-node Slurm (Debian's slurmctld, slurmd and munge, as root) is started for this module in
a temporary folder of its own: its config, state, spool, logs and munge key, its own ports and
munge socket. The repo's job script grades the example class as a 3-task array; the merged
output must equal one plain batch of the class. A task cancelled mid-run must be named by the
merge, which refuses, and the same array submitted again completes it. Every daemon, and every
process of its jobs, is stopped when the module ends, also when a test fails.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mha_grader.outputs.folder import OutputFolder
from mha_grader.runs.shards import Shard, shard_of

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "slurm" / "grade.sbatch"
CLASS = ROOT / "examples" / "submissions"
VENV = Path(sys.executable).parent.parent  # the virtualenv running these tests
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scontrol", "scancel")
# The daemons live in sbin, which a non-login PATH may leave out.
TOOLS = {c: shutil.which(c) or shutil.which(c, path="/usr/sbin:/sbin") for c in DAEMONS + CLIENTS}
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}
ENDED |= {"BOOT_FAIL", "DEADLINE", "PREEMPTED"}
# Scheduler variables this test's own environment may carry (run inside a job, say) that must
# not reach the jobs it submits.
SCHEDULER_VARIABLE = re.compile(r"SLURM_.*|SBATCH_.*|JOB_COMPLETION_INDEX|MHA_SHARD_COUNT")


def why_not() -> str | None:
    """Why a real Slurm cannot run here, or None."""
    if not sys.platform.startswith("linux"):
        return "a test Slurm needs Linux"
    missing = [c for c, path in TOOLS.items() if path is None]
    if missing:
        return (
            f"Slurm is not installed ({', '.join(missing)} not found): the test needs Debian's "
            "slurmctld, slurmd and munge packages, which scripts/test.sh installs with apt-get "
            "when run as root"
        )
    if os.geteuid() != 0:
        return "the test Slurm's daemons run as root (SlurmUser=root): run the tests as root"
    if not (VENV / "bin" / "mha-grade").exists():
        return f"mha-grade is not installed in {VENV} (pip install -e .)"
    return None


pytestmark = pytest.mark.skipif(why_not() is not None, reason=f"no test Slurm: {why_not()}")


def free_ports(n: int) -> list[int]:
    """Ports free now, none twice (each socket stays bound until all are chosen)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_for(
    condition: Callable[[], object], what: str, seconds: float, log: Callable[[], str]
) -> object:
    """Poll until `condition()` is true (and return it); fail after `seconds`, with `log()`."""
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {seconds:g} s waiting for {what}\n{log()}")
        time.sleep(0.1)
    return result


def environ_of(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or a zombie
        return b""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie is dead, only not yet reaped


class Slurm:
    """A single-node Slurm in `root`, started by `start`, stopped by `stop`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.conf = root / "slurm.conf"
        self.daemons: dict[str, subprocess.Popen] = {}
        self.jobs: list[str] = []
        env = {k: v for k, v in os.environ.items() if not SCHEDULER_VARIABLE.fullmatch(k)}
        # SLURM_CONF also marks every process of this cluster: slurmstepd and the jobs carry it.
        self.env = {**env, "SLURM_CONF": str(self.conf)}
        self.marker = f"SLURM_CONF={self.conf}".encode() + b"\0"

    # -- starting ---------------------------------------------------------------------------

    def start(self) -> None:
        for d in ("munge", "state", "spool", "log", "jobs"):
            (self.root / d).mkdir()
        (self.root / "munge").chmod(0o755)  # munged wants its socket's folder open to all
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        sock = self.root / "munge" / "munge.socket"
        m = self.root / "munge"
        self._daemon(
            "munged",
            [TOOLS["munged"], "--foreground", f"--socket={sock}", f"--key-file={key}"]
            + [f"--pid-file={m / 'munged.pid'}", f"--seed-file={m / 'munged.seed'}"]
            + [f"--log-file={self.root / 'log' / 'munged.log'}"],
        )
        wait_for(sock.exists, "munged's socket", 20, self.logs)
        host = socket.gethostname().split(".")[0]
        ctld_port, node_port = free_ports(2)
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=mhatest",
                    f"SlurmctldHost={host}(127.0.0.1)",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={node_port}",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={sock}",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    f"StateSaveLocation={self.root / 'state'}",
                    f"SlurmdSpoolDir={self.root / 'spool'}",
                    f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
                    f"SlurmdPidFile={self.root / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.root / 'log' / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core",
                    "SchedulerType=sched/builtin",
                    # No slurmdbd: squeue -t all and scontrol keep ended jobs for MinJobAge.
                    "AccountingStorageType=accounting_storage/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "JobCompType=jobcomp/none",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    "SlurmdParameters=config_overrides",  # 2 CPUs even where there are fewer
                    "MinJobAge=600",
                    # Start a task as soon as a CPU is free (by default a batch job may wait
                    # 3 s, which here doubled an array's time).
                    "SchedulerParameters=batch_sched_delay=0",
                    f"NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=8192 State=UNKNOWN",
                    f"PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP",
                ]
            )
            + "\n"
        )
        self._daemon("slurmctld", [TOOLS["slurmctld"], "-D", "-f", str(self.conf)])
        self._daemon("slurmd", [TOOLS["slurmd"], "-D", "-f", str(self.conf)])
        wait_for(self._node_idle, "the node to be idle", 60, self.logs)

    def _daemon(self, name: str, cmd: list[str]) -> None:
        with open(self.root / "log" / f"{name}.out", "wb") as out:
            self.daemons[name] = subprocess.Popen(
                cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )

    def _node_idle(self) -> bool:
        for name, proc in self.daemons.items():
            if proc.poll() is not None:
                pytest.fail(f"{name} exited with status {proc.returncode}\n{self.logs()}")
        done = self.run("sinfo", "-h", "-o", "%T", check=False)
        return done.returncode == 0 and done.stdout.strip() == "idle"

    # -- using it -----------------------------------------------------------------------------

    def run(self, *cmd: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
        done = subprocess.run(cmd, env=self.env, capture_output=True, text=True, **kw)
        if check and done.returncode != 0:
            pytest.fail(f"{' '.join(cmd)}: exit status {done.returncode}\n{done.stderr}")
        return done

    def submit(self, *args: str) -> str:
        """sbatch, run from the checkout as the README says; returns the job id."""
        # The script's default is the checkout's .venv; only another one needs saying.
        venv = [] if VENV == ROOT / ".venv" else ["--export", f"ALL,MHA_VENV={VENV}"]
        done = self.run("sbatch", "--parsable", *venv, *args, cwd=ROOT)
        job = done.stdout.strip().split(";")[0]
        self.jobs.append(job)
        return job

    def tasks(self, job: str) -> dict[int, dict[str, str]]:
        """Each array task's scontrol record (JobState, ExitCode, ...), by array task id."""
        done = self.run("scontrol", "-o", "show", "job", job, check=False)
        found = {}
        for line in done.stdout.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if fields.get("ArrayTaskId", "").isdigit():
                found[int(fields["ArrayTaskId"])] = fields
        return found

    def wait(self, job: str, count: int, seconds: float = 180) -> dict[int, dict[str, str]]:
        """Wait until the job's `count` array tasks have all ended; their records."""

        def ended():
            tasks = self.tasks(job)
            done = len(tasks) == count and all(t["JobState"] in ENDED for t in tasks.values())
            return tasks if done else None

        return wait_for(ended, f"job {job}'s {count} tasks to end", seconds, self.logs)

    def logs(self) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")) + sorted((self.root / "jobs").glob("*")):
            text = path.read_text(errors="replace").splitlines()[-25:]
            parts.append(f"--- {path.name} (last lines)\n" + "\n".join(text))
        return "\n".join(parts)

    # -- stopping -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Cancel the jobs, stop the daemons, kill whatever of this cluster is left (found by
        SLURM_CONF in its environment), each by its pid; fail if anything survives."""
        ctld = self.daemons.get("slurmctld")
        if self.jobs and ctld is not None and ctld.poll() is None:
            try:  # jobs first, while slurmctld can still end them; whatever is left is killed
                subprocess.run(
                    ["scancel", *self.jobs], env=self.env, capture_output=True, timeout=30
                )
                deadline = time.monotonic() + 30
                while not self._no_job_running() and time.monotonic() < deadline:
                    time.sleep(0.1)
            except subprocess.SubprocessError:
                pass
        for name in reversed(list(self.daemons)):  # slurmd, slurmctld, munged
            proc = self.daemons[name]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)
        for pid in self.leftovers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 15
        while (left := self.leftovers()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"processes of the test Slurm survived: {left}"

    def _no_job_running(self) -> bool:
        done = self.run("squeue", "-h", "-o", "%T", check=False, timeout=30)
        return done.returncode != 0 or not ({"RUNNING", "COMPLETING"} & set(done.stdout.split()))

    def leftovers(self) -> list[int]:
        """The live processes carrying this cluster's SLURM_CONF (slurmstepd, job scripts,
        graders), and its daemons."""
        pids = [p.pid for p in self.daemons.values() if alive(p.pid)]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                if self.marker in environ_of(int(entry.name)) and alive(int(entry.name)):
                    pids.append(int(entry.name))
        return sorted(set(pids))


@pytest.fixture(scope="module")
def slurm() -> Iterator[Slurm]:
    # Not under pytest's own tmp folder: munged insists that every user can reach its socket.
    root = Path(tempfile.mkdtemp(prefix="mha-slurm-"))
    root.chmod(0o755)
    cluster = Slurm(root)
    try:
        cluster.start()
        yield cluster
    finally:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def grade_array(slurm: Slurm, submissions: Path, out: Path, *extra: str) -> str:
    """Submit the repo's own job script as a 3-task array; returns the job id. One CPU a task:
    on the test's node of 2 CPUs the script's default of 2 would run the tasks one by one."""
    log = slurm.root / "jobs" / f"{out.name}-%A_%a.out"
    extra = ("--cpus-per-task=1", *extra)
    return slurm.submit(
        "--array=1-3", f"--output={log}", *extra, str(SCRIPT), str(submissions), str(out)
    )


def mha_grade(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(VENV / "bin" / "mha-grade"), *args], capture_output=True, text=True, cwd=ROOT
    )


def rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "grades.csv", newline="") as f:
        return list(csv.DictReader(f))


# -- the tests ----------------------------------------------------------------------------------


def test_a_three_task_array_of_the_job_script_merges_into_one_batchs_grade_sheet_and_summary(
    slurm, tmp_path
):
    out = tmp_path / "out"
    job = grade_array(slurm, CLASS.relative_to(ROOT), out)  # relative, from the checkout
    # Meanwhile the same class as one plain batch, for comparison.
    whole = subprocess.Popen(
        [str(VENV / "bin" / "mha-grade"), "batch", str(CLASS), "-o", str(tmp_path / "whole")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not SCHEDULER_VARIABLE.fullmatch(k)},
        start_new_session=True,  # its grading processes are stopped with it, below
    )
    try:
        tasks = slurm.wait(job, 3)
        _, err = whole.communicate(timeout=300)
    finally:
        if whole.poll() is None:
            os.killpg(whole.pid, signal.SIGKILL)
            whole.wait()
    assert whole.returncode == 0, err
    assert {i: (t["JobState"], t["ExitCode"]) for i, t in tasks.items()} == {
        i: ("COMPLETED", "0:0") for i in (1, 2, 3)
    }, slurm.logs()
    for i in (1, 2, 3):  # --shard auto gave task I the I-th of 3 parts
        run = OutputFolder(out / f"task-{i}").read_run()
        assert run["shard"] == f"{i}/3" and run["finished"] is True
        assert all(shard_of(s, 3) == i for s in run["students"])

    merged = mha_grade(
        "merge", *(str(out / f"task-{i}") for i in (1, 2, 3)), "-o", str(out / "class")
    )
    assert merged.returncode == 0, merged.stderr
    whole_out, class_out = tmp_path / "whole", out / "class"
    # What must be equal: every file a person or an LMS reads. batch.json is not compared
    # whole: a batch records the submissions folder, a merge the shard folders it joined.
    assert (class_out / "grades.csv").read_text() == (whole_out / "grades.csv").read_text()
    assert (class_out / "summary.md").read_text() == (whole_out / "summary.md").read_text()
    assert (class_out / "similarity.json").read_text() == (
        whole_out / "similarity.json"
    ).read_text()
    students = [r["student"] for r in rows(whole_out)]
    assert students == sorted(p.name.removesuffix(".zip") for p in CLASS.iterdir())
    for s in students:
        for name in ("feedback.md", "results.json"):
            assert (class_out / "students" / s / name).read_text() == (
                whole_out / "students" / s / name
            ).read_text(), f"{s}/{name}"
    merged_run, whole_run = OutputFolder(class_out).read_run(), OutputFolder(whole_out).read_run()
    for key in ("fingerprint", "students", "finished", "grader_errors", "layer"):
        assert merged_run[key] == whole_run[key], key


def test_a_task_cancelled_mid_run_is_named_by_the_merge_and_the_same_array_again_completes_it(
    slurm, tmp_path
):
    # A small class: one student per part, and in part 2 also one whose import takes 4 s, so
    # that task 2 is certainly under way when it is cancelled.
    subs = tmp_path / "subs"
    picked = {}
    for path in sorted(CLASS.iterdir()):
        picked.setdefault(shard_of(path.name.removesuffix(".zip"), 3), path)
    for path in picked.values():
        (shutil.copytree if path.is_dir() else shutil.copy)(path, subs / path.name)
    slow = next(f"slow{k}" for k in range(1000) if Shard(2, 3).holds(f"slow{k}"))
    shutil.copytree(CLASS / "alice", subs / slow)
    code = subs / slow / "multihead.py"
    code.write_text(code.read_text() + "\n\nimport time  # noqa: E402\n\ntime.sleep(4)\n")

    out = tmp_path / "out"
    job = grade_array(slurm, subs, out)
    started = lambda: (r := OutputFolder(out / "task-2").read_run()) and slow in r["students"]  # noqa: E731
    wait_for(started, "task 2 to start grading", 120, slurm.logs)
    slurm.run("scancel", f"{job}_2")  # as an instructor would, or the time limit
    tasks = slurm.wait(job, 3)
    assert tasks[2]["JobState"] == "CANCELLED", slurm.logs()
    assert not (out / "task-2" / "students" / slow / "grade.json").exists()  # mid-run

    parts = [str(out / f"task-{i}") for i in (1, 2, 3)]
    refused = mha_grade("merge", *parts, "-o", str(out / "class"))
    assert refused.returncode == 2
    assert f"{out / 'task-2'} (shard 2/3) did not finish" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not (out / "class" / "grades.csv").exists()

    again = grade_array(slurm, subs, out)  # the same array again, as the script's header says
    tasks = slurm.wait(job=again, count=3)
    assert {t["JobState"] for t in tasks.values()} == {"COMPLETED"}, slurm.logs()
    for i in (1, 3):  # finished before: nothing graded again
        log = (slurm.root / "jobs" / f"out-{again}_{i}.out").read_text()
        assert "graded 0, unchanged 1 " in log, log
    merged = mha_grade("merge", *parts, "-o", str(out / "class"))
    assert merged.returncode == 0, merged.stderr
    graded = {r["student"]: r for r in rows(out / "class")}
    assert sorted(graded) == sorted([slow, *(p.name.removesuffix(".zip") for p in picked.values())])
    assert json.loads((out / "class" / "batch.json").read_text())["finished"] is True
