"""Start the sandboxed zygote and ask it for contained worker processes.

The zygote (``worker/zygote.py``) runs under bubblewrap: new pid, network, ipc, uts and cgroup
namespaces, dies with the grader, and sees only a read-only interpreter, the virtualenv's
site-packages (mounted elsewhere, so the editable install cannot point back at the checkout),
``mha_grader/worker/`` and an empty private ``/tmp``: never the checkout, ``solutions/``,
``autograder/``, other submissions or the output folder.

When the grader runs as root, bubblewrap runs without a user namespace so that each worker can
drop to a uid of its own (one uid maps to one process tree: RLIMIT_NPROC becomes a real fork
limit, and ``kill -1`` as that uid ends the whole tree); the zygote keeps only the capabilities
it needs to do that. Without bubblewrap, one warning, and the worker gets the other limits only.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

WORKER_DIR = Path(__file__).resolve().parent / "worker"
SANDBOX_WORKER_PARENT = "/sandbox"  # the worker package appears as /sandbox/worker
SANDBOX_SITE = "/sandbox/site-packages"
ZYGOTE_START_TIMEOUT = 120.0
UID_BASE = 1 << 20  # far above any real account


class SandboxError(RuntimeError):
    """The grader could not start or talk to its sandbox (a grader failure, not the student's)."""


@dataclass(frozen=True)
class Limits:
    """Per-worker limits; the wall-clock ones are enforced by the trusted side (proxy.py)."""

    call_timeout: float = 10.0  # seconds of wall clock per call into student code
    import_timeout: float = 10.0  # per student module import
    submission_timeout: float = 60.0  # all calls and imports of one submission together
    cpu_seconds: int = 60
    memory_bytes: int = 2 << 30  # address space on top of what torch already maps
    processes: int = 16  # threads count too
    file_bytes: int = 16 << 20
    open_files: int = 64
    disk_bytes: int = 64 << 20  # the worker's private folder (its own tmpfs, as root)
    output_bytes: int = 4096  # captured stdout/stderr kept per submission

    def for_worker(self) -> dict:
        keys = ("cpu_seconds", "memory_bytes", "processes", "file_bytes", "open_files")
        keys += ("disk_bytes",)
        return {k: v for k, v in asdict(self).items() if k in keys}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _site_dirs() -> list[str]:
    paths = sysconfig.get_paths()
    dirs = []
    for key in ("purelib", "platlib"):
        p = os.path.realpath(paths[key])
        if p not in dirs:
            dirs.append(p)
    return dirs


def _mkdirs(path: str, made: set[str]) -> list[str]:
    """bwrap creates missing parents with mode 0700; make them 0755 so the worker's uid can
    traverse them (e.g. /root/.pyenv)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        d = "/" + "/".join(parts[: i + 1])
        if d not in made and d not in ("/usr", "/tmp", "/proc", "/dev"):
            made.add(d)
            args += ["--perms", "0755", "--dir", d]
    return args


def bwrap_command(
    bwrap: str, python: str, privileged: bool, empty_file: str
) -> tuple[list[str], list[str]]:
    """The bwrap argument list, and the site-packages paths as the worker will see them.
    ``empty_file`` is an empty regular file mounted over the editable install's pointers."""
    args = [bwrap, "--die-with-parent", "--new-session"]
    if privileged:  # no user namespace: per-worker uids need a real root in the sandbox
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
        # What the zygote needs to set a worker up (all dropped by the worker's setuid):
        # uids, killing a worker's uid, its private folder, its own mount/IPC/net namespaces.
        caps = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE")
        for cap in (*caps, "CAP_SYS_ADMIN"):
            args += ["--cap-add", cap]
    else:  # a user namespace; root asking for this mode runs as nobody inside it
        args += ["--unshare-all"]
        if os.geteuid() == 0:
            args += ["--uid", "65534", "--gid", "65534"]
    args += ["--ro-bind", "/usr", "/usr"]
    for link in ("lib", "lib64", "bin", "sbin"):
        if os.path.islink(f"/{link}"):
            args += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            args += ["--ro-bind", f"/{link}", f"/{link}"]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    made: set[str] = set()
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        args += _mkdirs(prefix + "/x", made) + ["--ro-bind", prefix, prefix]
    interpreter_dir = os.path.dirname(python)
    if not interpreter_dir.startswith(("/usr/", prefix + "/")):
        args += _mkdirs(python, made) + ["--ro-bind", interpreter_dir, interpreter_dir]
    args += ["--perms", "0755", "--dir", SANDBOX_WORKER_PARENT]
    seen = []
    for i, site in enumerate(_site_dirs()):
        if site.startswith(prefix + "/") or site.startswith("/usr/"):
            seen.append(site)  # already visible where it is
            continue
        target = f"{SANDBOX_SITE}{i or ''}"
        args += ["--ro-bind", site, target]
        for entry in os.listdir(site):  # hide the editable install's pointers to the checkout
            if entry.startswith("__editable__"):
                args += ["--ro-bind", empty_file, f"{target}/{entry}"]
        seen.append(target)
    args += ["--ro-bind", str(WORKER_DIR), f"{SANDBOX_WORKER_PARENT}/worker"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "0711", "--size", str(256 << 20), "--tmpfs", "/tmp"]
    args += ["--chdir", "/tmp", "--clearenv"]
    return args, seen


def _env() -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"  # one thread per worker: -j workers share the cores, NPROC counts threads
    return env


def worker_uids(pid: int | None = None) -> range:
    """The uids the workers of the grader process ``pid`` (default: this one) run as: a range
    of their own, so parallel graders never share one."""
    start = UID_BASE + ((os.getpid() if pid is None else pid) % (1 << 22)) * 256
    return range(start, start + 256)


_uid_lock = threading.Lock()
_uid_counter = itertools.count()


def _next_worker_uid() -> int:
    """Shared by every zygote of this process: two engines must never hand out the same uid,
    since killing a worker kills every process of its uid."""
    uids = worker_uids()
    with _uid_lock:
        return uids[next(_uid_counter) % len(uids)]


class Zygote:
    """A running zygote; ``spawn`` and ``kill`` are safe to call from several threads."""

    def __init__(self, privileged: bool | None = None) -> None:
        """``privileged`` (default: running as root) gives each worker a uid of its own;
        without it the workers share the zygote's uid (what a non-root grader gets)."""
        self.bwrap = bwrap_path()
        self.privileged = os.geteuid() == 0 if privileged is None else privileged
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._ctrl: socket.socket | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._log: tempfile.SpooledTemporaryFile | None = None
        self._ready = False

    @property
    def sandboxed(self) -> bool:
        return self.bwrap is not None

    def start(self) -> None:
        """Launch the zygote; returns at once (the first request waits until it is ready)."""
        if self.bwrap is None:
            warnings.warn(
                "bubblewrap (bwrap) is not installed: student code runs without a private "
                "filesystem view or network isolation, with resource limits only. "
                "Install the Debian package `bubblewrap` for full containment.",
                RuntimeWarning,
                stacklevel=2,
            )
        python = os.path.realpath(sys.executable)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = _env()
        self._tmp = tempfile.TemporaryDirectory(prefix="mha-worker-")
        if self.bwrap:
            empty = Path(self._tmp.name, "empty")
            empty.touch(mode=0o444)
            prefix, site_dirs = bwrap_command(self.bwrap, python, self.privileged, str(empty))
            for k, v in env.items():
                prefix += ["--setenv", k, v]
            parent, tmp_base = SANDBOX_WORKER_PARENT, "/tmp"
        else:
            prefix, site_dirs = [], _site_dirs()
            parent = str(WORKER_DIR.parent)
            os.chmod(self._tmp.name, 0o711)
            tmp_base = self._tmp.name
        config = {
            "ctrl_fd": theirs.fileno(),
            "tmp_base": tmp_base,
            "hide_paths": [parent],
        }
        boot = (
            "import sys; sys.path = [p for p in sys.path if p] + "
            f"{[*site_dirs, parent]!r}; from worker.zygote import main; main()"
        )
        cmd = [*prefix, python, "-I", "-S", "-B", "-c", boot, json.dumps(config)]
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            cmd,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            env=env,
            start_new_session=True,
        )
        theirs.close()
        self._ctrl = ours
        self._ready = False  # the zygote imports torch meanwhile: see _wait_ready

    def _wait_ready(self) -> None:
        """Wait for the zygote's hello (called under the lock, before the first request), so
        that the grader can do its own start-up work while the zygote imports torch."""
        if self._ready:
            return
        self._ctrl.settimeout(ZYGOTE_START_TIMEOUT)
        try:
            hello = json.loads(self._ctrl.recv(1 << 16) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not hello.get("ready"):
            log = self._log_text()
            self._stop()
            raise SandboxError(f"the sandboxed worker did not start:\n{log}")
        self._ready = True

    def _log_text(self) -> str:
        if self._log is None or self._log.closed:
            return ""
        self._log.seek(0)
        return self._log.read()[-4000:].decode(errors="replace")

    def _request(self, req: dict, fds: list[int] = ()) -> dict:
        with self._lock:
            if self._ctrl is None:
                raise SandboxError("the sandbox is not running")
            self._wait_ready()
            try:
                socket.send_fds(self._ctrl, [json.dumps(req).encode()], list(fds))
                self._ctrl.settimeout(30.0)
                reply = self._ctrl.recv(1 << 16)
            except OSError as e:
                raise SandboxError(f"lost the sandbox: {e}\n{self._log_text()}") from None
            if not reply:
                raise SandboxError(f"the sandbox stopped:\n{self._log_text()}")
            return json.loads(reply)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def spawn(self, limits: Limits, channel: socket.socket, output_fd: int) -> tuple[int, int]:
        """Fork a contained worker on ``channel``/``output_fd``; returns (pid, uid) for kill."""
        uid = _next_worker_uid()
        reply = self._request(
            {"op": "spawn", "uid": uid, "limits": limits.for_worker()},
            [channel.fileno(), output_fd],
        )
        return reply["pid"], uid

    def kill(self, pid: int, wait: bool = True) -> str | None:
        """Kill a worker and everything it started; returns how it ended ("exit:0", ...).
        With ``wait=False`` returns at once (None) while the zygote does the killing."""
        return self._request({"op": "kill", "pid": pid, "wait": wait}).get("status")

    def ping(self) -> None:
        """Return once the zygote has finished every earlier request (kills included)."""
        self._request({"op": "ping"})

    def close(self) -> None:
        """Stop the zygote; every worker in the sandbox dies with it."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._ctrl is not None:
            self._ctrl.close()
            self._ctrl = None
        if self._proc is not None:
            if self.bwrap is None:  # no pid namespace: let it kill its workers' uids and exit
                try:
                    self._proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(self._proc.pid, 9)
            except OSError:
                pass
            self._proc.wait()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
