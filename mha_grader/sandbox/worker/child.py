"""The per-submission worker: forked from the zygote, contained, then serves calls.

``start`` runs in the freshly forked process while it still holds the zygote's privileges: it
moves its channel and output to fixed descriptors, closes everything else (above all the
zygote's control socket), writes the student's files into its own private folder, applies the
resource limits, drops to its own unprivileged uid and only then imports student code.

Requests and replies are ``wire`` messages in frames (``channel``):
- ``{"op": "load", "files": {module: source}, "placeholders": {module: reason}, "imports":
  {"table": {file: [package, ...]}, "message": refusal}}``
- ``{"op": "import", "module": name}`` -> ``{"ok": True, "functions": [...]}``
- ``{"op": "call", "module", "func", "args", "kwargs"}`` -> ``{"ok": True, "value": ...}``
- ``{"op": "many", "module", "func", "calls": [{"args", "kwargs"}, ...]}`` -> ``{"ok":
  True, "results": [reply of each call, without seq]}``: several calls in one exchange
A call may name ``"observe": [callee, ...]``: its reply then holds ``"calls"``, what the student's
function called of those and what each returned (``callees.py``); or ``"inject": [callee, ...]``:
each such call is sent to the trusted side as ``{"seq", "callee", "args", "kwargs"}`` and its
answer ``{"seq", "ok", "value" | "error"}`` is what the student's function gets.
Every reply echoes the request's ``seq``; a failure is ``{"ok": False, "error": record}``.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import socket
import sys
import traceback
import warnings
from typing import Any

from . import inputs, origin, wire
from .callees import Callees, in_modules
from .channel import ChannelClosed, recv_frame, send_frame
from .contain import contain
from .imports import ImportRule

CHANNEL_FD = 3
MAX_MESSAGE = 500  # characters of an exception message sent back


def start(sock_fd: int, out_fd: int, spec: dict) -> None:
    """Contain this freshly forked process and serve requests; never returns."""
    os.setpgid(0, 0)  # its own process group (the zygote sets it too, so no kill can miss it)
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.dup2(sock_fd, CHANNEL_FD)
    os.closerange(CHANNEL_FD + 1, 1 << 16)  # the zygote's control socket above all
    home = contain(spec)
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
        "numpy": origin.numpy_name(exc_type),  # NumPy's class by identity, else ""
        "message": message,
        "where": where[:300],
    }


class Server:
    """Serves the trusted side's requests, one at a time, on the channel socket."""

    def __init__(self, sock: socket.socket, home: str):
        self.sock = sock
        self.home = home
        self.files: set[str] = set()
        self.seq: Any = None  # the request being served (a callee frame carries it)

    def run(self) -> None:
        while True:
            try:
                request = wire.decode(recv_frame(self.sock), allow_modules=True)
            except ChannelClosed:
                os._exit(0)
            seq = request.get("seq")
            self.seq = seq
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
            return self.load(request["files"], request["placeholders"], request.get("imports"))
        if op == "import":
            return self.import_module(request["module"])
        if op == "call":
            return self.call(
                request["module"],
                request["func"],
                request["args"],
                request["kwargs"],
                request.get("observe") or [],
                request.get("inject") or [],
            )
        if op == "many":
            return self.many(request)
        if op == "probe":
            return self.probe(request["calls"])
        return {"ok": False, "error": {"kind": "protocol", "message": f"unknown op {op!r}"}}

    def load(self, files: dict[str, str], placeholders: dict[str, str], imports: Any) -> dict:
        for module, source in files.items():
            with open(os.path.join(self.home, f"{module}.py"), "w", encoding="utf-8") as f:
                f.write(source)
            self.files.add(f"{module}.py")
        sys.meta_path.insert(0, _Placeholder(placeholders))
        if type(imports) is dict:  # what the student's files may import (imports.py)
            ImportRule(imports.get("table", {}), imports.get("message"), self.home).install()
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

    def many(self, request: dict) -> dict:
        """Several calls of one function in one exchange; each result as a call's reply (a call
        may name ``"observe"``, as a single call does: a composite's plain call and its watched
        one are sent together)."""
        module, func = request["module"], request["func"]
        results = []
        for c in request["calls"]:
            reply = self.call(module, func, c["args"], c["kwargs"], c.get("observe") or [])
            results.append(reply)
        return {"ok": True, "results": results}

    def call(
        self,
        module: str,
        func: str,
        args: Any,
        kwargs: Any,
        observe: list | None = None,
        inject: list | None = None,
    ) -> dict:
        fn = getattr(sys.modules.get(module), func, None)
        if fn is None:
            return {"ok": False, "error": {"kind": "missing", "message": f"no function {func}"}}
        before = inputs.snapshot(args, kwargs)
        error = None
        callees: Callees | contextlib.nullcontext = contextlib.nullcontext()
        if observe or inject:  # most calls watch nothing: no stand-ins to set up
            targets, spaces = in_modules(self.files, list(inject or observe or []))
            callees = Callees(
                targets,
                spaces,
                getattr(fn, "__closure__", None) or (),
                lambda e: _describe(e, self.files),
                self.ask if inject else None,
            )
        # Warnings (NumPy's overflow in exp...) are kept apart from what the code prints: only
        # whether there were any is told, never their text.
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("default")
            try:
                with callees:
                    value = fn(*args, **kwargs)
            except BaseException as e:
                error = _describe(e, self.files)
        told = callees.reply_fields() if isinstance(callees, Callees) else {}
        if warned:
            told["warned"] = True
        if error is not None:
            return {"ok": False, "error": error, **told}
        changed = inputs.modified(before)  # the contract: inputs are never modified in place
        reply = {"ok": True, "value": value, **told}
        return reply | ({"modified": changed} if changed else {})

    def ask(self, question: dict) -> dict:
        """Send a callee frame for the request being served; return the trusted side's answer."""
        question["seq"] = self.seq
        try:
            send_frame(self.sock, wire.encode(question))
        except wire.WireError as e:  # the student's code passed something that is not data
            raise TypeError(f"{question.get('callee')}: {e}") from None
        answer = wire.decode(recv_frame(self.sock))
        return answer if type(answer) is dict else {}
