"""Start the zygote in the strongest containment layer this machine allows; ask it for workers.

Three layers, strongest first (docs/containment.md), chosen by trying, not by guessing:

- ``namespaces``: the zygote runs under bubblewrap: new pid, network, ipc, uts and cgroup
  namespaces, dies with the grader, and sees only a read-only interpreter, the virtualenv's
  site-packages (mounted elsewhere, so the editable install cannot point back at the
  checkout), ``mha_grader/sandbox/worker/`` and an empty private ``/tmp``: never the checkout,
  ``solutions/``, ``autograder/``, other submissions or the output folder. As root, bubblewrap
  runs without a user namespace so that each worker can drop to a uid of its own (one uid
  maps to one process tree: RLIMIT_NPROC becomes a real fork limit, and ``kill -1`` as that
  uid ends the whole tree); the zygote keeps only the capabilities it needs to do that.
- ``uid`` (no namespaces, as root: what a Docker container such as Gradescope's allows): each
  worker drops to a uid of its own with a private 0700 folder, no capabilities, no_new_privs,
  a seccomp filter it installs itself and Landlock where the kernel has it; the trusted
  paths are closed to other users first (``closure``).
- ``limits`` (no namespaces, not root): the workers share the grader's uid: rlimits,
  timeouts, seccomp (no network, no signal outside its process group), Landlock where the
  kernel has it; killed by process group.

A layer that cannot start raises ``LayerUnavailable`` with a one-line reason. The zygote holds
a second one beside it, for the NumPy questions' workers (``Zygote.numpy``, ``worker/withheld.py``).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from . import closure
from .layers import LayerInfo, LayerUnavailable, Limits, SandboxError, candidate_layers

WORKER_DIR = Path(__file__).resolve().parent / "worker"
SANDBOX_WORKER_PARENT = "/sandbox"  # the worker package appears as /sandbox/worker
SANDBOX_SITE = "/sandbox/site-packages"
ZYGOTE_START_TIMEOUT = 120.0
UID_BASE = 1 << 20  # far above any real account


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


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
    for i, site in enumerate(closure.site_dirs()):
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
    """A running zygote in one layer; ``spawn`` and ``kill`` are safe to call from several
    threads. ``start`` raises ``LayerUnavailable`` when the layer cannot start here."""

    def __init__(
        self,
        layer: str = "namespaces",
        privileged: bool | None = None,
        protect: Sequence[Path] = (),
        probe: bool = False,
        collapse: bool = False,
    ) -> None:
        """``privileged`` (namespaces layer; default: running as root) gives each worker a uid
        of its own. ``protect``: more paths closed to workers (output folder, submissions).
        ``probe``: start, check and stop at once (to learn whether the layer works).
        ``collapse``: back the zygote's heap with huge pages while it is idle (worth its 0.8 s
        of CPU only for hundreds of workers: a large batch)."""
        self.layer = layer
        self.bwrap = bwrap_path() if layer == "namespaces" else None
        root = os.geteuid() == 0
        if layer == "namespaces":
            self.privileged = root if privileged is None else privileged
        else:  # what the layer is: a uid per worker (uid), or the grader's own (limits)
            self.privileged = layer == "uid"
        self.protect = [Path(p) for p in protect]
        self.probe = probe
        self.collapse = collapse
        self.info: LayerInfo | None = None
        self._lock = threading.Lock()
        self._numpy_lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._ctrl: socket.socket | None = None
        self._numpy_ctrl: socket.socket | None = None  # the NumPy questions' zygote (withheld)
        self._numpy_ready = False
        self.torch_files = ""  # in a NumPy worker: "hidden", "readable" or "absent"
        self.numpy_pid: int | None = None  # the NumPy questions' zygote, as its sandbox numbers it
        self.numpy = NumpyZygote(self)
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._log: tempfile.SpooledTemporaryFile | None = None
        self._ready = False

    def start(self) -> None:
        """Launch the zygote and wait for its first word (it has checked its containment);
        the zygote then imports torch while the grader goes on (see _wait_ready)."""
        root = os.geteuid() == 0
        if self.layer == "namespaces" and self.bwrap is None:
            raise LayerUnavailable("bubblewrap (bwrap) is not installed")
        if self.layer == "uid" and not root:
            raise LayerUnavailable("handing each worker a uid of its own needs root")
        if self.layer == "limits" and root:
            raise LayerUnavailable("student code never runs as root: use the uid layer")
        changes = closure.close_to_workers(self.protect) if self.layer == "uid" else []
        python = os.path.realpath(sys.executable)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        numpy_ours, numpy_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = _env()
        self._tmp = tempfile.TemporaryDirectory(prefix="mha-worker-")
        if self.layer == "namespaces":
            empty = Path(self._tmp.name, "empty")
            empty.touch(mode=0o444)
            prefix, site_dirs = bwrap_command(self.bwrap, python, self.privileged, str(empty))
            for k, v in env.items():
                prefix += ["--setenv", k, v]
            parent, tmp_base = SANDBOX_WORKER_PARENT, "/tmp"
        else:
            prefix, site_dirs = [], closure.site_dirs()
            parent = str(WORKER_DIR.parent)
            os.chmod(self._tmp.name, 0o711)
            tmp_base = self._tmp.name
        must_read, must_not_read = closure.check_lists(self.protect)
        config = {
            "layer": self.layer,
            "ctrl_fd": theirs.fileno(),
            "numpy_ctrl_fd": numpy_theirs.fileno(),
            "tmp_base": tmp_base,
            "hide_paths": [parent],
            "read_paths": closure.read_paths(),
            "probe": self.probe,
            "collapse": self.collapse,
            "check": {
                "uid": _next_worker_uid(),
                "limits": Limits().for_worker(),
                "must_read": must_read,
                "must_not_read": must_not_read,
            },
        }
        boot = (
            "import sys; sys.path = [p for p in sys.path if p] + "
            f"{[*site_dirs, parent]!r}; from worker.zygote import main; main()"
        )
        cmd = [*prefix, python, "-I", "-S", "-B", "-c", boot, json.dumps(config)]
        self._log = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            cmd,
            pass_fds=[theirs.fileno(), numpy_theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            env=env,
            start_new_session=True,
        )
        theirs.close()
        numpy_theirs.close()
        self._ctrl = ours
        self._numpy_ctrl = numpy_ours
        self._ready = self._numpy_ready = False
        try:
            self.info = self._started(changes)
        except LayerUnavailable:
            self._stop()
            raise

    def _started(self, changes: list[str]) -> LayerInfo:
        """Read the zygote's first message: the layer works, or why not (one line)."""
        self._ctrl.settimeout(ZYGOTE_START_TIMEOUT)
        try:
            hello = json.loads(self._ctrl.recv(1 << 16) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not hello.get("started"):
            lines = [line.strip() for line in self._log_text().splitlines() if line.strip()]
            raise LayerUnavailable(lines[-1][:200] if lines else "the zygote did not start")
        if "error" in hello:
            raise LayerUnavailable(str(hello["error"])[:200])
        check = hello.get("check") or {}
        if "error" in check:
            raise LayerUnavailable(f"a contained worker could not start: {check['error']:.200}")
        if check.get("unreadable"):
            raise LayerUnavailable(
                f"a worker cannot read {check['unreadable'][0]}, which every worker needs: "
                "make it readable by other users (o+r, and o+x on every folder above it)"
            )
        if check.get("network"):
            raise LayerUnavailable("the worker's seccomp filter did not take effect")
        readable = list(check.get("readable", ()))
        if readable and self.layer == "uid":
            raise LayerUnavailable(
                f"a worker uid can read {readable[0]}, a trusted path (the checkout, the output "
                "folder or the submissions) that could not be closed: make it unreadable to "
                "other users (chmod o-rwx), or use a folder that does not hold the interpreter"
            )
        return LayerInfo(
            self.layer,
            self.privileged,
            int(hello.get("landlock") or 0),
            trusted_readable=bool(readable),
            changes=tuple(changes),
        )

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
            return self._exchange(self._ctrl, req, fds)

    def _numpy_request(self, req: dict, fds: list[int] = ()) -> dict:
        with self._numpy_lock:
            if self._numpy_ctrl is None:
                raise SandboxError("the sandbox is not running")
            if not self._numpy_ready:
                self._numpy_ctrl.settimeout(ZYGOTE_START_TIMEOUT)
                try:
                    hello = json.loads(self._numpy_ctrl.recv(1 << 16) or b"{}")
                except (OSError, ValueError):
                    hello = {}
                if not hello.get("ready"):
                    raise SandboxError(
                        f"the NumPy questions' sandbox did not start:\n{self._log_text()}"
                    )
                self.torch_files = str(hello.get("torch_files", ""))
                self.numpy_pid = hello.get("pid") if type(hello.get("pid")) is int else None
                self._numpy_ready = True
            return self._exchange(self._numpy_ctrl, req, fds)

    def _exchange(self, ctrl: socket.socket, req: dict, fds: list[int]) -> dict:
        try:
            socket.send_fds(ctrl, [json.dumps(req).encode()], list(fds))
            ctrl.settimeout(30.0)
            reply = ctrl.recv(1 << 16)
        except OSError as e:
            raise SandboxError(f"lost the sandbox: {e}\n{self._log_text()}") from None
        if not reply:
            raise SandboxError(f"the sandbox stopped:\n{self._log_text()}")
        return json.loads(reply)

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def spawn(self, limits: Limits, channel: socket.socket, output_fd: int) -> tuple[int, int]:
        """Fork a contained worker on ``channel``/``output_fd``; returns (pid, uid) for kill."""
        return _spawn(self._request, limits, channel, output_fd)

    def kill(self, pid: int, wait: bool = True) -> str | None:
        """Kill a worker and everything it started; returns how it ended ("exit:0", ...).
        With ``wait=False`` returns at once (None) while the zygote does the killing."""
        return self._request({"op": "kill", "pid": pid, "wait": wait}).get("status")

    def ping(self) -> None:
        """Return once the zygotes have finished every earlier request (kills included)."""
        self._request({"op": "ping"})
        if self._numpy_ready:
            self._numpy_request({"op": "ping"})

    def close(self) -> None:
        """Stop the zygote; every worker in the sandbox dies with it."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._numpy_ctrl is not None:
            self._numpy_ctrl.close()
            self._numpy_ctrl = None
        if self._ctrl is not None:
            self._ctrl.close()
            self._ctrl = None
        if self._proc is not None:
            if self.layer != "namespaces":  # no pid namespace: let it kill its workers and exit
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


def _spawn(request, limits: Limits, channel: socket.socket, output_fd: int) -> tuple[int, int]:
    uid = _next_worker_uid()
    reply = request(
        {"op": "spawn", "uid": uid, "limits": limits.for_worker()},
        [channel.fileno(), output_fd],
    )
    return reply["pid"], uid


class NumpyZygote:
    """The zygote of the NumPy questions' workers, beside ``zygote`` in its sandbox: forked
    before torch was imported, with the NumPy-only wall (``worker/withheld.py``). The same
    ``spawn`` and ``kill`` as a ``Zygote``'s."""

    def __init__(self, zygote: Zygote):
        self.zygote = zygote
        self.layer = zygote.layer

    def spawn(self, limits: Limits, channel: socket.socket, output_fd: int) -> tuple[int, int]:
        return _spawn(self.zygote._numpy_request, limits, channel, output_fd)

    def kill(self, pid: int, wait: bool = True) -> str | None:
        req = {"op": "kill", "pid": pid, "wait": wait}
        return self.zygote._numpy_request(req).get("status")

    def alive(self) -> bool:
        return self.zygote.alive()


def start_zygote(
    require: str | None = None,
    protect: Sequence[Path] = (),
    privileged: bool | None = None,
    layers: Iterable[str] | None = None,
    probe: bool = False,
    collapse: bool = False,
) -> Zygote:
    """Start a zygote in the strongest layer that works here (of ``layers``, default all this
    process may use), no weaker than ``require``. Its ``info`` says which and why; raises
    ``LayerUnavailable`` (one line) when none qualifies."""
    tried: list[str] = []
    allowed = candidate_layers(require)
    for layer in layers if layers is not None else allowed:
        if layer not in allowed:
            continue
        zygote = Zygote(layer, privileged, protect, probe, collapse)
        try:
            zygote.start()
        except LayerUnavailable as e:
            tried.append(f"{layer}: {e}")
            continue
        zygote.info = replace(zygote.info, fallbacks=tuple(tried))
        return zygote
    floor = f" as strong as {require} (the layer required)" if require else ""
    why = "; ".join(tried) or f"no layer as strong as {require} can run as this user"
    raise LayerUnavailable(f"no sandbox layer{floor} can start here: {why}")


def probe_layer(require: str | None = None, protect: Sequence[Path] = ()) -> LayerInfo:
    """Which layer grading will use here (started, checked and stopped at once)."""
    zygote = start_zygote(require, protect, probe=True)
    zygote.close()
    return zygote.info
