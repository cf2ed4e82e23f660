"""The sandbox seen from inside: what a worker can see, write, signal and use.

The probe module below runs as the student's ``multihead`` and reports what it observes; the
assertions stay here, in the trusted process. One engine serves the whole module.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

import pytest

from mha_grader import errors, sandbox
from mha_grader.engine import Engine
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=2.0, import_timeout=2.0, submission_timeout=20.0)

PROBE = """
import os, resource, sys, time

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return type(e).__name__

def exists(path):
    return os.path.exists(path)

def ids():
    return [os.getuid(), os.geteuid(), os.getgid(), os.getcwd()]

def try_write(path, size=10):
    try:
        with open(path, "wb") as f:
            f.write(b"x" * size)
        return "written"
    except OSError as e:
        return type(e).__name__

def limit(name):
    return list(resource.getrlimit(getattr(resource, name)))

def file_text(path):
    with open(path) as f:
        return f.read()

def import_all(names):
    import importlib
    for n in names:
        importlib.import_module(n)
    return True

def sleep(seconds):
    time.sleep(seconds)
    return seconds

def die(code):
    os._exit(code)

def shout(n):
    sys.stdout.write("z" * n)
    return n

def shared_memory(create):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    flags = 0o1666 if create else 0  # IPC_CREAT | rw for everyone
    return libc.shmget(0x4D4841, 4096 if create else 0, flags) >= 0

_listener = None

def abstract_socket(listen):
    global _listener
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if listen:
            s.bind("\\0mha-grader-test")
            s.listen()
            _listener = s
        else:
            s.connect("\\0mha-grader-test")
        return True
    except OSError:
        return False

def fill(chunk):
    written = 0
    try:
        for i in range(1000):
            with open(f"fill{i}.bin", "wb") as f:
                f.write(b"x" * chunk)
            written += chunk
    except OSError:
        pass
    return written

print("hello from import")
"""


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


@pytest.fixture(scope="module")
def session(engine):
    with engine.open_session({"multihead": PROBE}) as s:
        yield s


def call(session, func, *args):
    return session.call("multihead", func, args, {})


needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="per-worker uids need root")


@needs_bwrap
def test_the_checkout_and_its_trusted_folders_are_invisible(session):
    assert call(session, "exists", str(ROOT)) is False
    for folder in ("solutions", "autograder", "mha_grader", "tests"):
        assert call(session, "exists", str(ROOT / folder)) is False
    assert "work" not in call(session, "listing", "/") or not str(ROOT).startswith("/work")


@needs_bwrap
def test_only_the_worker_package_of_the_grader_is_mounted(session):
    assert call(session, "listing", "/sandbox/worker") == sorted(
        p.name for p in (ROOT / "mha_grader" / "worker").iterdir()
    )


@needs_bwrap
def test_the_editable_install_does_not_point_back_at_the_checkout(session):
    site = "/sandbox/site-packages"
    editable = [n for n in call(session, "listing", site) if n.startswith("__editable__")]
    assert editable  # the files are there, but empty
    assert all(call(session, "file_text", f"{site}/{n}") == "" for n in editable)


@needs_root
def test_each_worker_runs_as_an_unprivileged_uid_of_its_own(engine, session):
    uid, euid, gid, home = call(session, "ids")
    assert uid == euid == gid and uid in sandbox.worker_uids()
    with engine.open_session({"multihead": PROBE}) as other:
        other_uid, *_, other_home = call(other, "ids")
        assert other_uid != uid
        # a sibling's private folder is closed to it
        assert call(other, "listing", home) == "PermissionError"
        assert other_home != home


@needs_root
def test_workers_share_no_ipc_object_or_abstract_socket(engine, session):
    assert call(session, "shared_memory", True) is True
    assert call(session, "abstract_socket", True) is True
    with engine.open_session({"multihead": PROBE}) as other:
        assert call(other, "shared_memory", False) is False
        assert call(other, "abstract_socket", False) is False


@needs_root
def test_a_worker_that_fills_its_folder_takes_no_space_from_others(engine, session):
    small = Limits(file_bytes=1 << 20, disk_bytes=4 << 20)
    with engine.open_session({"multihead": PROBE}, limits=small) as greedy:
        assert call(greedy, "fill", 1 << 20) < small.disk_bytes
        home = call(session, "ids")[3]
        assert call(session, "try_write", f"{home}/still-room.bin", 1 << 20) == "written"


@needs_bwrap
def test_writes_succeed_only_in_the_workers_own_folder(session):
    home = call(session, "ids")[3]
    assert call(session, "try_write", f"{home}/scratch.txt") == "written"
    for path in ("/tmp/elsewhere.txt", "/usr/evil", "/sandbox/worker/evil.py", "/evil"):
        assert call(session, "try_write", path) in ("PermissionError", "OSError")


def test_resource_limits_are_applied(session):
    assert call(session, "limit", "RLIMIT_NPROC")[0] >= LIMITS.processes
    assert call(session, "limit", "RLIMIT_FSIZE") == [LIMITS.file_bytes] * 2
    assert call(session, "limit", "RLIMIT_CPU")[0] == LIMITS.cpu_seconds
    assert call(session, "limit", "RLIMIT_AS")[0] > LIMITS.memory_bytes


@needs_root
def test_the_process_limit_is_exact_for_a_worker_uid(session):
    assert call(session, "limit", "RLIMIT_NPROC")[0] == LIMITS.processes


def test_a_file_larger_than_the_limit_cannot_be_written(session):
    home = call(session, "ids")[3]
    assert call(session, "try_write", f"{home}/big.bin", LIMITS.file_bytes + 1) == "OSError"


def test_modules_not_preloaded_by_the_zygote_still_import(session):
    names = ["numpy.testing", "numpy.linalg", "torch.nn.functional", "json", "unittest", "math"]
    assert call(session, "import_all", names) is True


def test_a_call_that_overruns_its_time_limit_is_stopped_and_the_next_call_works(session):
    with pytest.raises(errors.CallTimeout, match="ran out of time"):
        call(session, "sleep", 30)
    assert call(session, "ids")[0] >= 0  # a fresh worker with the same files


def test_a_worker_that_exits_is_replaced_for_the_next_call(session):
    with pytest.raises(errors.WorkerCrashed, match="the process exited"):
        call(session, "die", 7)
    assert call(session, "exists", "/") is True


def test_import_output_is_kept_and_call_output_is_only_counted(engine):
    with engine.open_session({"multihead": PROBE}) as s:
        assert s.call("multihead", "shout", (5000,), {}) == 5000
        assert s.log.import_output == "hello from import\n"
        assert s.log.call_output_bytes == 5000


def test_the_submission_time_budget_stops_further_calls(engine):
    tight = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=1.0)
    with engine.open_session({"multihead": PROBE}, limits=tight) as s:
        with pytest.raises(errors.CallTimeout, match="total time limit"):
            s.call("multihead", "sleep", (3,), {})
        with pytest.raises(errors.CallTimeout, match="total time limit"):
            s.call("multihead", "sleep", (0,), {})
        assert s.log.budget_exhausted


def test_sessions_in_parallel_threads_do_not_mix_up_replies(engine):
    results, failures = {}, []

    def worker(i: int) -> None:
        try:
            with engine.open_session({"multihead": PROBE}) as s:
                results[i] = [s.call("multihead", "sleep", (i / 100,), {}) for _ in range(5)]
        except Exception as e:  # pragma: no cover - reported below
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert results == {i: [i / 100] * 5 for i in range(4)}


def test_without_bubblewrap_one_warning_then_limits_only(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Engine(limits=LIMITS) as engine:
            with engine.open_session({"multihead": PROBE}) as s:
                assert s.call("multihead", "sleep", (0,), {}) == 0
                assert s.call("multihead", "limit", ("RLIMIT_FSIZE",), {})[0] == LIMITS.file_bytes
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len([m for m in messages if "bubblewrap" in m]) == 1


def test_the_worker_package_imports_nothing_of_the_trusted_side():
    import ast
    import sys

    allowed = set(sys.stdlib_module_names) | {"numpy", "torch"}
    for path in (ROOT / "mha_grader" / "worker").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            assert set(roots) <= allowed, f"{path.name} imports {roots}"
