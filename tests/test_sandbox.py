"""The sandbox seen from inside: what a worker can see, write, signal and use.

The probe module below runs as the student's ``multihead`` and reports what it observes; the
assertions stay here, in the trusted process. One engine serves the whole module, in the
strongest layer this machine allows; ``tests/test_layers.py`` runs this file again inside a
kernel that refuses namespaces (as root: the uid layer; as nobody: limits), with and without
Landlock, so every assertion below says what holds in which layer.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from mha_grader import errors, sandbox
from mha_grader.grading.engine import Engine
from mha_grader.sandbox import Limits, zygote

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
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if listen:
            s.bind("\\0mha-grader-test")
            s.listen()
            _listener = s
        else:
            s.connect("\\0mha-grader-test")
        return True
    except OSError:
        return False

def readable(path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").close()
        return True
    except OSError:
        return False

def status():
    with open("/proc/self/status") as f:
        return dict(line.rstrip("\\n").split(":\\t", 1) for line in f if ":\\t" in line)

def mode_of(path):
    st = os.stat(path)
    return [st.st_mode & 0o777, st.st_uid]

def refused(what):
    # the errno a call a worker never needs fails with (0: it succeeded)
    import ctypes, socket
    libc = ctypes.CDLL(None, use_errno=True)
    def errno_of(result):
        return ctypes.get_errno() if result == -1 else 0
    if what == "tcp":
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
            return 0
        except OSError as e:
            return e.errno
    if what == "setsid":
        try:
            os.setsid()
            return 0
        except OSError as e:
            return e.errno
    if what == "unshare":
        return errno_of(libc.unshare(0x10000000))  # CLONE_NEWUSER
    if what == "ptrace":
        return errno_of(libc.ptrace(16, os.getppid(), 0, 0))  # PTRACE_ATTACH
    if what == "kill_parent":
        try:
            os.kill(os.getppid(), 0)
            return 0
        except OSError as e:
            return e.errno
    if what == "chmod":
        open("mine.txt", "w").close()
        try:
            os.chmod("mine.txt", 0o644)
            return 0
        except OSError as e:
            return e.errno
    if what == "fork":
        try:
            pid = os.fork()
        except OSError as e:
            return e.errno
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        return 0
    if what == "thread":
        import threading
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()
        return 0
    if what == "own_group":
        try:
            os.kill(0, 0)
            return 0
        except OSError as e:
            return e.errno
    raise ValueError(what)

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
def layer(engine):
    """The layer in force (sandbox.LayerInfo)."""
    return engine.layer


@pytest.fixture(scope="module")
def session(engine):
    with engine.open_session({"multihead": PROBE}) as s:
        yield s


def call(session, func, *args):
    return session.call("multihead", func, args, {})


def only_in(*names: str):
    """Skip a test outside the named layers (docs/containment.md says why it cannot hold)."""

    def check(layer: sandbox.LayerInfo) -> None:
        if layer.name not in names:
            pytest.skip(
                f"does not hold in the {layer.name} layer "
                "(docs/containment.md, 'How student code runs')"
            )

    return check


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="per-worker uids need root")
TRUSTED = ["solutions", "autograder", "mha_grader", "tests", "solutions/multihead.py"]
TRUSTED += [
    "autograder/points.toml",
    "autograder/tests/softmax.py",
    "mha_grader/grading/engine.py",
    "",
]


def test_the_checkout_and_its_trusted_folders_are_invisible_or_unreadable(session, layer):
    if layer.name == "namespaces":
        assert call(session, "exists", str(ROOT)) is False
        for folder in ("solutions", "autograder", "mha_grader", "tests"):
            assert call(session, "exists", str(ROOT / folder)) is False
        assert "work" not in call(session, "listing", "/") or not str(ROOT).startswith("/work")
    elif layer.trusted_readable:  # limits without Landlock: the worker is the grader's user
        assert layer.name == "limits" and not layer.landlock
        assert "only" not in layer.describe() and "can read" in layer.describe()
        assert call(session, "readable", str(ROOT / "solutions" / "multihead.py")) is True
    else:  # uid layer, or Landlock: the checkout is there, but nothing of it can be read
        for rel in TRUSTED:
            assert call(session, "readable", str(ROOT / rel)) is False, rel


def test_the_grading_process_memory_cannot_be_read_in_any_layer(session):
    for what in ("mem", "environ", "maps"):  # hidden inputs and expected values live there
        assert call(session, "readable", f"/proc/{os.getpid()}/{what}") is False


def test_only_the_worker_package_of_the_grader_is_mounted(session, layer):
    only_in("namespaces")(layer)
    assert call(session, "listing", "/sandbox/worker") == sorted(
        p.name for p in (ROOT / "mha_grader" / "sandbox" / "worker").iterdir()
    )


def test_the_editable_install_does_not_point_back_at_the_checkout(session, layer):
    only_in("namespaces")(layer)
    site = "/sandbox/site-packages"
    editable = [n for n in call(session, "listing", site) if n.startswith("__editable__")]
    assert editable  # the files are there, but empty
    assert all(call(session, "file_text", f"{site}/{n}") == "" for n in editable)


def test_each_worker_runs_as_an_unprivileged_uid_of_its_own(engine, session, layer):
    if not layer.per_worker_uid:
        pytest.skip("workers share one uid in this layer")
    uid, euid, gid, home = call(session, "ids")
    assert uid == euid == gid and uid in zygote.worker_uids()
    with engine.open_session({"multihead": PROBE}) as other:
        other_uid, *_, other_home = call(other, "ids")
        assert other_uid != uid
        # a sibling's private folder is closed to it
        assert call(other, "listing", home) == "PermissionError"
        assert other_home != home


def test_workers_share_no_ipc_object_or_abstract_socket(engine, session, layer):
    if layer.name != "namespaces":  # no IPC namespace: making either is refused outright
        assert call(session, "shared_memory", True) is False
        assert call(session, "abstract_socket", True) is False
        return
    if not layer.per_worker_uid:
        pytest.skip("the namespaces layer without root shares one IPC namespace")
    assert call(session, "shared_memory", True) is True
    assert call(session, "abstract_socket", True) is True
    with engine.open_session({"multihead": PROBE}) as other:
        assert call(other, "shared_memory", False) is False
        assert call(other, "abstract_socket", False) is False


def test_a_worker_that_fills_its_folder_takes_no_space_from_others(engine, session, layer):
    if not (layer.name == "namespaces" and layer.per_worker_uid):
        pytest.skip("a size-limited folder per worker needs its own mount (docs/containment.md)")
    small = Limits(file_bytes=1 << 20, disk_bytes=4 << 20)
    with engine.open_session({"multihead": PROBE}, limits=small) as greedy:
        assert call(greedy, "fill", 1 << 20) < small.disk_bytes
        home = call(session, "ids")[3]
        assert call(session, "try_write", f"{home}/still-room.bin", 1 << 20) == "written"


def test_writes_succeed_only_in_the_workers_own_folder(engine, session, layer):
    home = call(session, "ids")[3]
    assert call(session, "try_write", f"{home}/scratch.txt") == "written"
    shared = ["/tmp/elsewhere.txt", "/dev/shm/elsewhere.txt"]
    closed = ["/usr/evil", "/evil", str(ROOT / "mha_grader" / "sandbox" / "worker" / "evil.py")]
    closed += [str(ROOT / "evil.txt"), str(ROOT / "solutions" / "evil.py")]
    if layer.name == "namespaces":
        closed += ["/sandbox/worker/evil.py", *shared]
    elif layer.trusted_readable:  # limits without Landlock: it writes what the grader can
        assert call(session, "try_write", str(ROOT / "evil.txt")) == "written"
        os.unlink(ROOT / "evil.txt")
        return
    elif layer.landlock:
        closed += shared
    else:  # uid without Landlock: /tmp and /dev/shm are writable, but private, and cleaned
        uid = call(session, "ids")[0]
        for path in shared:
            assert call(session, "try_write", path) == "written"
            assert call(session, "mode_of", path) == [0o600, uid]  # umask 077, chmod refused
        assert call(session, "refused", "chmod") == 1  # so it cannot open them up later
        with engine.open_session({"multihead": PROBE}) as other:
            assert all(call(other, "readable", path) is False for path in shared)
    refusals = ("PermissionError", "OSError")
    if layer.name == "namespaces":  # the checkout is not even there
        refusals += ("FileNotFoundError",)
    for path in closed:
        assert call(session, "try_write", path) in refusals, path


def test_calls_a_worker_never_needs_are_refused_without_namespaces(session, layer):
    if layer.name == "namespaces":
        pytest.skip("the namespaces themselves hold these back")
    for what in ("tcp", "setsid", "unshare", "ptrace", "kill_parent", "fork"):
        assert call(session, "refused", what) in (1, 13), what  # EPERM, EACCES
    assert call(session, "refused", "own_group") == 0  # its own process group it may signal
    assert call(session, "refused", "thread") == 0  # threads, unlike processes, it may start
    st = call(session, "status")
    assert st["CapEff"] == "0000000000000000" and st["NoNewPrivs"] == "1"
    assert st["Seccomp"] == "2"  # a filter of its own


def test_landlock_keeps_the_worker_to_its_allow_list_where_the_kernel_has_it(session, layer):
    if layer.name == "namespaces":
        pytest.skip("namespaces: the filesystem view is already private")
    from mha_grader.sandbox.worker import landlock

    assert layer.landlock == landlock.abi_version()  # used wherever the kernel offers it
    home = call(session, "ids")[3]
    expected = not layer.landlock  # /tmp is world-readable: only Landlock closes it
    assert call(session, "readable", "/tmp") is expected
    assert call(session, "readable", "/usr/lib") is True
    assert call(session, "readable", home) is True


def test_resource_limits_are_applied(session):
    assert call(session, "limit", "RLIMIT_NPROC")[0] >= LIMITS.processes
    assert call(session, "limit", "RLIMIT_FSIZE") == [LIMITS.file_bytes] * 2
    assert call(session, "limit", "RLIMIT_CPU")[0] == LIMITS.cpu_seconds
    assert call(session, "limit", "RLIMIT_AS")[0] > LIMITS.memory_bytes


def test_the_process_limit_is_exact_for_a_worker_uid(session, layer):
    if not layer.per_worker_uid:
        pytest.skip("workers share one uid in this layer")
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


def test_without_bubblewrap_the_next_layer_is_chosen_and_says_why(monkeypatch):
    monkeypatch.setattr(zygote, "bwrap_path", lambda: None)
    with Engine(limits=LIMITS) as engine:
        expected = "uid" if os.geteuid() == 0 else "limits"
        assert engine.layer.name == expected
        assert engine.layer.fallbacks == ("namespaces: bubblewrap (bwrap) is not installed",)
        line = engine.layer.describe()
        assert "\n" not in line and line.startswith(f"sandbox: {expected}: ")
        assert "bubblewrap (bwrap) is not installed" in line
        with engine.open_session({"multihead": PROBE}) as s:
            assert s.call("multihead", "sleep", (0,), {}) == 0
            assert s.call("multihead", "limit", ("RLIMIT_FSIZE",), {})[0] == LIMITS.file_bytes


def test_the_layer_in_force_is_the_one_the_caller_expects(layer):
    """tests/test_layers.py names the layer its run of this file must get: "uid+landlock",
    "limits" (no Landlock)... Unset, the layer is whatever this machine allows."""
    expected = os.environ.get("MHA_EXPECT_SANDBOX")
    if not expected:
        pytest.skip("no expectation set")
    name, _, landlock = expected.partition("+")
    assert (layer.name, bool(layer.landlock)) == (name, landlock == "landlock")


def test_a_worker_killed_right_after_its_spawn_is_gone_and_the_zygote_goes_on(engine):
    # killed before it took a uid of its own: its uid reaches nothing, its parent must kill it
    from mha_grader.grading.link import WorkerLink

    zygote = engine._zygote
    for spawner in (zygote, zygote.numpy):
        for _ in range(3):
            worker = WorkerLink(spawner, LIMITS, lambda chunk: None)
            worker.retire(wait=True)  # a hang here was the zygote waiting on a live child
    engine.wait_idle()
    with engine.open_session({"multihead": PROBE}) as session:  # the zygote still serves
        assert session.call("multihead", "sleep", (0,), {}) == 0
