"""Containment layers, chosen by trying, in a real kernel that refuses namespaces.

``tests/refusing_kernel.py`` runs a command under a seccomp filter that refuses namespaces and
mounts, with Docker's capability bounding set: what Gradescope's and most CI containers give a
grader. Here the grader runs inside it as root (the uid layer) and as nobody (the limits
layer), with and without Landlock, and the project's hostile and sandbox suites run again in
each, asserting what holds per layer. The root runs use this checkout (its .venv inside it, as
an instructor's would be): as the uid layer does, they close it to other users.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import refusing_kernel

from mha_check.questions import CODE_QUESTIONS
from mha_grader import sandbox
from mha_grader.points import POINTS
from mha_grader.sandbox import closure, zygote

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GRADE = [PYTHON, "-m", "mha_grader.cli"]
SUBMISSIONS = ROOT / "examples" / "submissions"
NOBODY = "nobody"

why_not = refusing_kernel.available()
pytestmark = [
    pytest.mark.skipif(why_not is not None, reason=f"refusing kernel: {why_not}"),
    pytest.mark.skipif(os.geteuid() != 0, reason="runs the grader as root and as nobody"),
]


def run(
    argv: list[str],
    *,
    user: str | None = None,
    landlock: bool = True,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess:
    """Run ``argv`` in the refusing kernel; output captured as text."""
    full_env = {k: v for k, v in os.environ.items() if k != sandbox.REQUIRE_ENV}
    full_env.update(MPLCONFIGDIR=str(cwd / ".mpl"), **(env or {}))
    return subprocess.run(
        refusing_kernel.wrap(argv, user=user, landlock=landlock),
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def make_nobody_checkout() -> Path:
    """A copy of the checkout that nobody owns (nobody cannot read a root-owned checkout the
    uid layer has closed), run with this checkout's .venv (its interpreter made reachable)."""
    closure.open_the_way()
    base = Path(tempfile.mkdtemp(prefix="mha-nobody-"))
    copy = base / "checkout"
    skip = shutil.ignore_patterns(".*", "__pycache__", "*.egg-info", "out")
    shutil.copytree(ROOT, copy, ignore=skip)
    entry = pwd.getpwnam(NOBODY)
    for path in [base, *base.rglob("*")]:
        os.lchown(path, entry.pw_uid, entry.pw_gid)
    return copy


@pytest.fixture(scope="module")
def nobody_checkout():
    copy = make_nobody_checkout()
    try:
        yield copy
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


def first_line(result: subprocess.CompletedProcess) -> str:
    return (result.stdout.splitlines() or [""])[0]


def grades(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


PROBE_KERNEL = """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
def err(result):
    return ctypes.get_errno() if result == -1 else 0
status = dict(l.rstrip("\\n").split(":\\t", 1) for l in open("/proc/self/status") if ":\\t" in l)
print(json.dumps({
    "unshare": err(libc.unshare(0x10000000)),
    "clone3": err(libc.syscall(435, None, 0)),
    "mount": err(libc.mount(b"none", b"/nonexistent-mha", b"tmpfs", 0, None)),
    "setns": err(libc.setns(0, 0)),
    "bounding": int(status["CapBnd"], 16),
    "landlock": max(0, libc.syscall(444, None, ctypes.c_size_t(0), 1)),
}))
"""


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "no-landlock"])
def test_the_refusing_kernel_refuses_namespaces_and_mounts_with_dockers_capabilities(landlock):
    result = run([PYTHON, "-c", PROBE_KERNEL], landlock=landlock)
    seen = json.loads(result.stdout)
    assert seen["unshare"] == seen["mount"] == seen["setns"] == errno.EPERM
    assert seen["clone3"] == errno.ENOSYS
    assert seen["bounding"] == refusing_kernel.DOCKER_BOUNDING_SET
    assert (seen["landlock"] > 0) == (landlock and bool(sandbox_landlock_here()))
    if zygote.bwrap_path():
        bwrap = run([zygote.bwrap_path(), "--dev-bind", "/", "/", "true"])
        assert bwrap.returncode != 0
        assert "Creating new namespace failed: Operation not permitted" in bwrap.stderr


def sandbox_landlock_here() -> int:
    from mha_grader.sandbox.worker import landlock

    return landlock.abi_version()


REQUIRE_UID = ["--require-sandbox", "uid"]


def test_as_root_namespaces_fail_and_the_uid_layer_is_chosen_recorded_and_allowed_as_a_floor(
    tmp_path,
):
    out = tmp_path / "out"
    # Required as the floor, the uid layer is allowed (the refusals: the test below).
    result = run([*GRADE, "one", str(SUBMISSIONS / "alice"), "-o", str(out)] + REQUIRE_UID)
    assert result.returncode == 0, result.stderr
    line = first_line(result)
    assert line.startswith("sandbox: uid: each worker runs as a uid of its own")
    if zygote.bwrap_path():
        assert "(namespaces: bwrap: Creating new namespace failed" in line
    assert "Traceback" not in result.stdout + result.stderr
    data = json.loads((out / "students" / "alice" / "results.json").read_text())
    assert data["extra_data"]["sandbox"] == "uid"
    assert data["score"] == pytest.approx(sum(POINTS.values()))
    assert "`uid` (1)" in (out / "summary.md").read_text()


def test_as_nobody_the_limits_layer_is_chosen_and_correct_code_gets_full_marks(
    nobody_checkout, tmp_path
):
    out = Path(tempfile.mkdtemp(dir=nobody_checkout))
    os.chown(out, pwd.getpwnam(NOBODY).pw_uid, -1)
    alice = nobody_checkout / "examples" / "submissions" / "alice"
    result = run([*GRADE, "one", str(alice), "-o", str(out)], user=NOBODY, cwd=nobody_checkout)
    assert result.returncode == 0, result.stderr
    assert first_line(result).startswith("sandbox: limits: each worker runs as this user")
    data = json.loads((out / "students" / "alice" / "results.json").read_text())
    assert data["extra_data"]["sandbox"] == "limits"
    assert data["score"] == pytest.approx(sum(POINTS.values()))


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_require_sandbox_refuses_to_grade_below_it_in_one_line(tmp_path, how):
    out = tmp_path / "out"
    flag = ["--require-sandbox", "namespaces"] if how == "flag" else []
    env = {"MHA_REQUIRE_SANDBOX": "namespaces"} if how == "environment" else {}
    for command in (["one", str(SUBMISSIONS / "alice")], ["batch", str(SUBMISSIONS)]):
        result = run([*GRADE, *command, "-o", str(out), *flag], env=env)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot grade" in lines[0] and "namespaces" in lines[0]
        assert "Traceback" not in result.stderr
        assert not (out / "grades.csv").exists()  # nothing graded, no 0 charged to anyone


def test_in_the_refusing_kernel_as_root_the_class_gets_the_same_scores_as_in_the_full_sandbox(
    tmp_path,
):
    if not zygote.bwrap_path():
        pytest.skip("the full sandbox (bubblewrap) is not installed here to compare with")
    full, refused = tmp_path / "full", tmp_path / "refused"
    normal = subprocess.run(
        [*GRADE, "batch", str(SUBMISSIONS), "-o", str(full), "-j", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert normal.returncode == 0, normal.stderr
    assert first_line(normal).startswith("sandbox: namespaces")
    result = run([*GRADE, "batch", str(SUBMISSIONS), "-o", str(refused), "-j", "2"])
    assert result.returncode == 0, result.stderr
    assert first_line(result).startswith("sandbox: uid")
    expected, got = grades(full), grades(refused)
    assert got == expected
    assert all(row["status"] != "grader-error" for row in got.values())
    assert f"`uid` ({len(got)})" in (refused / "summary.md").read_text()


def test_as_nobody_in_the_refusing_kernel_correct_code_gets_full_marks_in_a_batch(
    nobody_checkout,
):
    out = nobody_checkout / "class-out"
    subs = nobody_checkout / "examples" / "submissions"
    result = run(
        [*GRADE, "batch", str(subs), "-o", str(out), "-j", "2"], user=NOBODY, cwd=nobody_checkout
    )
    assert result.returncode == 0, result.stderr
    assert first_line(result).startswith("sandbox: limits")
    rows = grades(out)
    assert all(row["status"] != "grader-error" for row in rows.values())
    assert float(rows["alice"]["total"]) == sum(POINTS.values())
    assert all(float(rows["erin"][q]) == POINTS[q] for q in CODE_QUESTIONS)  # right code


def shared_files() -> set[Path]:
    """What is at the top of the world-writable folders now."""
    found: set[Path] = set()
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            found |= {Path(e.path) for e in os.scandir(folder)}
        except OSError:
            pass
    return found


LAYER_RUNS = {
    "uid+landlock": (None, True),
    "uid": (None, False),
    "limits+landlock": (NOBODY, True),
    "limits": (NOBODY, False),
}


SUITES = ["tests/test_hostile.py", "tests/test_sandbox.py", "tests/test_numpy_wall.py"]


# Runs that must not overlap: the limits layer without Landlock writes /tmp as nobody, files
# that the uid layer without Landlock can read (docs/containment.md), so it starts once the
# uid run is over (the hostile `leak` submission stashes inputs there and prints them back).
AFTER = {"limits": "uid"}


class LayerRuns:
    """The layer runs of this module, each a pytest process in the refusing kernel with a
    checkout and a pytest folder of its own."""

    def __init__(self) -> None:
        self.started: dict[str, tuple[subprocess.Popen, Path]] = {}
        self.made: list[Path] = []
        self.lock = threading.Lock()
        self.waiting: dict[str, threading.Thread] = {}

    def start(self, expected: str) -> None:
        user, landlock = LAYER_RUNS[expected]
        cwd = ROOT
        if user:
            cwd = make_nobody_checkout()
            self.made.append(cwd.parent)
        where = cwd.parent if user else None
        scratch = Path(tempfile.mkdtemp(prefix=f"mha-layer-{expected}-", dir=where))
        self.made.append(scratch)
        if user:
            os.chown(scratch, pwd.getpwnam(user).pw_uid, -1)
        argv = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", *SUITES]
        argv.append(f"--basetemp={scratch / 'pytest'}")
        env = {k: v for k, v in os.environ.items() if k != sandbox.REQUIRE_ENV}
        env.update(MPLCONFIGDIR=str(scratch / ".mpl"), MHA_EXPECT_SANDBOX=expected)
        with open(scratch / "log.txt", "w") as log:
            proc = subprocess.Popen(
                refusing_kernel.wrap(argv, user=user, landlock=landlock),
                cwd=cwd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        with self.lock:
            self.started[expected] = (proc, scratch)

    def start_after(self, expected: str, first: str) -> None:
        def run() -> None:
            with self.lock:
                before = self.started.get(first)
            if before is not None:
                before[0].wait()
            self.start(expected)

        self.waiting[expected] = threading.Thread(target=run, daemon=True)
        self.waiting[expected].start()

    def result(self, expected: str) -> tuple[int, str]:
        if expected in self.waiting:
            self.waiting[expected].join()
        proc, scratch = self.started[expected]
        try:
            proc.wait(timeout=1800)
        finally:
            output = (scratch / "log.txt").read_text(errors="replace")
        return proc.returncode, output

    def stop(self) -> None:
        for thread in self.waiting.values():
            thread.join(timeout=1800)
        for proc, _ in self.started.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for path in self.made:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def layer_runs():
    """The hostile, sandbox and wall suites started in every layer at once (but AFTER's),
    before this file's other tests: they mostly wait (on time limits, on killed process
    trees), so several at a time, beside the other tests, take little more than one."""
    runs = LayerRuns()
    before = shared_files()
    try:
        for expected, (_, landlock) in LAYER_RUNS.items():
            if landlock and not sandbox_landlock_here():
                continue
            if expected in AFTER:
                runs.start_after(expected, AFTER[expected])
            else:
                runs.start(expected)
        yield runs
    finally:
        runs.stop()
        # What the hostile submissions left in the shared folders as nobody goes too.
        for path in shared_files() - before:
            if path.lstat().st_uid == pwd.getpwnam(NOBODY).pw_uid:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)


@pytest.mark.parametrize("expected", list(LAYER_RUNS))
def test_the_hostile_and_sandbox_suites_hold_in_each_layer(expected, layer_runs):
    landlock = LAYER_RUNS[expected][1]
    if landlock and not sandbox_landlock_here():
        pytest.skip("this kernel has no Landlock")
    returncode, output = layer_runs.result(expected)
    assert returncode == 0, output[-8000:]
    assert " passed" in output and " failed" not in output


def test_a_uid_layer_that_cannot_close_a_trusted_path_does_not_start_and_says_why_in_a_line():
    from mha_grader.grading.engine import Engine

    interpreter = os.path.realpath(sys.base_prefix)  # workers need it: it cannot be closed
    engine = Engine(layers=("uid",), protect=(interpreter,))
    with pytest.raises(sandbox.LayerUnavailable) as caught:
        engine.start()
    reason = str(caught.value)
    assert "\n" not in reason and f"uid: a worker uid can read {interpreter}" in reason
    assert engine.layer is None and engine._zygote is None  # nothing runs, nothing is graded
