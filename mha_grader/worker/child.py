"""The per-submission worker: forked from the zygote, contained, then serves calls.

``start`` runs in the freshly forked process while it still holds the zygote's privileges: it
moves its channel and output to fixed descriptors, closes everything else (above all the
zygote's control socket), writes the student's files into its own private folder, applies the
resource limits, drops to its own unprivileged uid and only then imports student code.

Requests and replies are ``wire`` messages in frames (``channel``):
- ``{"op": "load", "files": {module: source}, "placeholders": {module: reason}}``
- ``{"op": "import", "module": name}`` -> ``{"ok": True, "functions": [...]}``
- ``{"op": "call", "module", "func", "args", "kwargs"}`` -> ``{"ok": True, "value": ...}``
Every reply echoes the request's ``seq``; a failure is ``{"ok": False, "error": record}``.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.abc
import importlib.util
import os
import resource
import signal
import socket
import sys
import traceback
from typing import Any

from . import inputs, wire
from .channel import ChannelClosed, recv_frame, send_frame
from .linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_SET_DUMPABLE,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    mount,
    prctl,
    unshare,
)

CHANNEL_FD = 3
MAX_MESSAGE = 500  # characters of an exception message sent back


def _vm_size() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _count_processes(uid: int) -> int:
    n = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                n += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return n


def _apply_limits(spec: dict, privileged: bool) -> None:
    lim = spec["limits"]
    address_space = _vm_size() + lim["memory_bytes"]  # torch is already mapped: budget on top
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu_seconds"], lim["cpu_seconds"] + 2))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["file_bytes"], lim["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (lim["open_files"], lim["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # NPROC counts every process of the real uid. Privileged: the child gets a uid of its own,
    # so the limit is exactly its own tree. Otherwise the uid is shared: allow what exists.
    nproc = lim["processes"] + (0 if privileged else _count_processes(os.getuid()))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def start(sock_fd: int, out_fd: int, spec: dict) -> None:
    """Contain this freshly forked process and serve requests; never returns."""
    os.setsid()  # own process group: the fallback kill takes the whole group
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.dup2(sock_fd, CHANNEL_FD)
    os.closerange(CHANNEL_FD + 1, 1 << 16)  # the zygote's control socket above all

    uid = spec["uid"]
    privileged = os.geteuid() == 0 and uid is not None
    home = os.path.join(spec["tmp_base"], f"w{uid if uid is not None else os.getpid()}")
    os.mkdir(home, 0o700)
    if privileged:
        # Its own mount, IPC and network namespaces: a private size-limited tmpfs as its
        # folder (filling it fills nobody else's), and no SysV/POSIX IPC object or abstract
        # socket shared with another worker or outliving this one.
        unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET)
        mount(None, "/", None, MS_REC | MS_PRIVATE)  # our mounts stay ours
        size = spec["limits"]["disk_bytes"]
        mount(
            "tmpfs",
            home,
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            f"size={size},mode=0700,uid={uid},gid={uid}",
        )
    os.chdir(home)
    os.environ.update(HOME=home, TMPDIR=home, TMP=home, TEMP=home)

    _apply_limits(spec, privileged)
    if privileged:  # a uid of its own: cannot signal, trace or read the zygote or other workers
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_NO_NEW_PRIVS, 1)  # setuid binaries stay unprivileged

    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")
    sys.dont_write_bytecode = True
    sys.path = [home] + [p for p in sys.path if p not in spec["hide_paths"]]
    for name in [m for m in sys.modules if m == "worker" or m.startswith("worker.")]:
        del sys.modules[name]  # the student's `import worker...` finds nothing
    Server(socket.socket(fileno=CHANNEL_FD), home).run()


class _Placeholder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stands in for a student module that is missing or failed to import, so that the other
    file still imports (``from multihead import multi_head_attention``) and only calls fail."""

    def __init__(self, reasons: dict[str, str]):
        self.reasons = reasons

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name in self.reasons:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        reason = self.reasons[module.__name__]

        def unavailable(attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)

            def stub(*args: Any, **kwargs: Any) -> Any:
                raise ImportError(f"{module.__name__}.{attr} is not available: {reason}")

            stub.__name__ = attr
            return stub

        module.__getattr__ = unavailable


def _describe(e: BaseException, files: set[str]) -> dict:
    """An error record for the trusted side; never calls more student code than needed."""
    exc_type = type(e)
    try:
        message = str(e)[:MAX_MESSAGE]
    except BaseException:  # a hostile __str__
        message = "(the exception's message could not be read)"
    mro = [c.__name__ for c in exc_type.__mro__ if getattr(builtins, c.__name__, None) is c]
    where = ""
    if isinstance(e, SyntaxError) and os.path.basename(str(e.filename)) in files:
        text = (e.text or "").strip()
        where = f"{os.path.basename(str(e.filename))}, line {e.lineno}: {text}"
        message = str(e.msg)[:MAX_MESSAGE]
    else:
        try:
            for frame in reversed(traceback.extract_tb(e.__traceback__)):
                name = os.path.basename(frame.filename)
                if name in files:
                    where = f"{name}, line {frame.lineno}: {(frame.line or '').strip()}"
                    break
        except BaseException:
            pass
    kind = "not_attempted" if isinstance(e, NotImplementedError) else "raised"
    return {
        "kind": kind,
        "type": str(exc_type.__name__)[:100],
        "mro": mro,
        "message": message,
        "where": where[:300],
    }


class Server:
    """Serves the trusted side's requests, one at a time, on the channel socket."""

    def __init__(self, sock: socket.socket, home: str):
        self.sock = sock
        self.home = home
        self.files: set[str] = set()

    def run(self) -> None:
        while True:
            try:
                request = wire.decode(recv_frame(self.sock), allow_modules=True)
            except ChannelClosed:
                os._exit(0)
            seq = request.get("seq")
            try:
                reply = self.handle(request)
            except BaseException as e:  # SystemExit, KeyboardInterrupt... from student code
                reply = {"ok": False, "error": _describe(e, self.files)}
            self.reply(seq, reply)

    def reply(self, seq: Any, reply: dict) -> None:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:
                pass
        reply["seq"] = seq
        try:
            payload = wire.encode(reply)
        except BaseException as e:  # the value is not plain data (or too large)
            error = {"kind": "bad_result", "message": str(e)[:MAX_MESSAGE]}
            payload = wire.encode({"ok": False, "seq": seq, "error": error})
        send_frame(self.sock, payload)

    def handle(self, request: dict) -> dict:
        op = request.get("op")
        if op == "load":
            return self.load(request["files"], request["placeholders"])
        if op == "import":
            return self.import_module(request["module"])
        if op == "call":
            return self.call(request["module"], request["func"], request["args"], request["kwargs"])
        if op == "probe":
            return self.probe(request["calls"])
        return {"ok": False, "error": {"kind": "protocol", "message": f"unknown op {op!r}"}}

    def load(self, files: dict[str, str], placeholders: dict[str, str]) -> dict:
        for module, source in files.items():
            with open(os.path.join(self.home, f"{module}.py"), "w", encoding="utf-8") as f:
                f.write(source)
            self.files.add(f"{module}.py")
        sys.meta_path.insert(0, _Placeholder(placeholders))
        return {"ok": True}

    def import_module(self, module: str) -> dict:
        try:
            mod = importlib.import_module(module)
        except BaseException as e:
            return {"ok": False, "error": _describe(e, self.files)}
        names = []
        for name, value in list(vars(mod).items()):
            if type(name) is str and not name.startswith("_") and callable(value):
                names.append(name)
        return {"ok": True, "functions": names}

    def probe(self, calls: list) -> dict:
        """Several calls on the grader's own public inputs, in one exchange: only how each one
        failed comes back (None when it returned), never a value."""
        errors = []
        for c in calls:
            reply = self.call(c["module"], c["func"], c["args"], c["kwargs"])
            errors.append(None if reply["ok"] else reply["error"])
        return {"ok": True, "errors": errors}

    def call(self, module: str, func: str, args: Any, kwargs: Any) -> dict:
        fn = getattr(sys.modules.get(module), func, None)
        if fn is None:
            return {"ok": False, "error": {"kind": "missing", "message": f"no function {func}"}}
        before = inputs.snapshot(args, kwargs)
        try:
            value = fn(*args, **kwargs)
        except BaseException as e:
            return {"ok": False, "error": _describe(e, self.files)}
        changed = inputs.modified(before)  # the contract: inputs are never modified in place
        return {"ok": True, "value": value, **({"modified": changed} if changed else {})}
