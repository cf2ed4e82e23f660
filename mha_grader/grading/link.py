"""One live worker as the trusted side sees it: its channel, its output, its end.

``WorkerLink.exchange`` sends one request frame and waits for the reply frame until a deadline,
reading what the worker prints meanwhile (handed to ``on_output``). The reply is decoded with
``wire.decode`` (never with modules, never with pickle; frame and header checked against size
limits before parsing) and held against ``replies.checked`` before anyone reads it. What can go
wrong is raised as one of three plain exceptions, for the session to turn into the student's
outcome: ``LinkTimeout``, ``LinkClosed`` (the worker is gone) and ``LinkViolation`` (it sent what
the grader's worker code never sends).
"""

from __future__ import annotations

import fcntl
import os
import selectors
import socket
import time
from collections.abc import Callable
from typing import Any

from ..sandbox import Limits, Zygote
from ..sandbox.worker import wire
from ..sandbox.worker.channel import FrameParser, FrameTooLarge, send_frame
from . import replies


class LinkTimeout(Exception):
    """No reply before the deadline; the worker has been killed."""


class LinkClosed(Exception):
    """The worker went away (or stopped reading) before replying; it has been killed."""


class LinkViolation(Exception):
    """The worker sent something the grader's worker code never sends; ``what`` says what (for
    the grader's log only). The worker is still alive: the session decides what it costs."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class WorkerLink:
    """One worker process spawned by the zygote, with its channel and its output pipe."""

    def __init__(self, zygote: Zygote, limits: Limits, on_output: Callable[[bytes], None]):
        self.zygote = zygote
        self.on_output = on_output
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        read_fd, write_fd = os.pipe()
        try:
            self.pid, self.uid = zygote.spawn(limits, theirs, write_fd)
        finally:
            theirs.close()
            os.close(write_fd)
        self.sock = ours
        self.out_fd = read_fd
        fcntl.fcntl(read_fd, fcntl.F_SETFL, fcntl.fcntl(read_fd, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.sock.setblocking(False)
        # One selector for the worker's life (not one per call): replies and output.
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.sock, selectors.EVENT_READ, "sock")
        self.sel.register(self.out_fd, selectors.EVENT_READ, "out")
        self.parser = FrameParser()
        self.dead = False
        self.end_status: str | None = None  # how the zygote saw it end ("exit:1", "signal:...")

    # -- the end -------------------------------------------------------------------------

    def kill(self, wait: bool = True) -> None:
        if not self.dead:
            self.dead = True
            try:
                self.end_status = self.zygote.kill(self.pid, wait)
            finally:
                self.sock.close()

    def close_output(self) -> None:
        # Once only: a second os.close would close whatever descriptor another thread has
        # opened under the same number since (a retired worker can be retired again).
        if self.out_fd < 0:
            return
        self.sel.close()
        fd, self.out_fd = self.out_fd, -1
        try:
            os.close(fd)
        except OSError:
            pass

    def retire(self, wait: bool = True) -> None:
        """Kill it, read the rest of its output, close everything."""
        self.kill(wait)
        self.drain(final=True)
        self.close_output()

    def drain(self, final: bool = False) -> bool:
        """Read what the worker printed; returns False at end of output."""
        for _ in range(64 if not final else 1 << 12):
            try:
                chunk = os.read(self.out_fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.on_output(chunk)
        return True

    # -- one exchange ------------------------------------------------------------------------

    def exchange(
        self, payload: bytes, seq: int, deadline: float, op: str, answer: Answer | None = None
    ) -> dict:
        """Send ``payload`` and return the checked reply numbered ``seq`` to request ``op``.
        ``answer``: the callees the trusted side answers during this call (worker/callees.py's
        inject): each callee frame the worker sends meanwhile is checked and answered."""
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            send_frame(self.sock, payload)
            self.sock.setblocking(False)
        except OSError:  # the worker is gone, or not reading: both end it
            self.retire()
            raise LinkClosed from None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.retire()
                raise LinkTimeout
            for key, _ in self.sel.select(left):
                if key.data == "out":
                    if not self.drain():
                        self.sel.unregister(self.out_fd)
                    continue
                try:
                    data = self.sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.retire()
                    raise LinkClosed
                try:
                    self.parser.feed(data)
                except FrameTooLarge:  # the worker's own code never sends one
                    raise LinkViolation("a frame over the size limit") from None
                frame = self.parser.pop()
                if frame is None:
                    continue
                message = _decoded(frame, callee_frame=answer is not None)
                if answer is not None and type(message) is dict and "callee" in message:
                    self._send_answer(answer, message, seq, deadline)
                    continue
                self.drain()  # the worker flushed before replying
                if not replies.checked(message, seq, op):
                    raise LinkViolation(f"a reply out of step or malformed for {op!r}")
                return message

    def _send_answer(self, answer: Answer, question: Any, seq: int, deadline: float) -> None:
        if not replies.callee_question(question, seq, answer.names):
            raise LinkViolation("a callee frame out of step or malformed")
        if answer.count >= replies.MAX_CALLEE_CALLS:
            raise LinkViolation("more callee frames than one call may send")
        answer.count += 1
        reply = answer.reply(question["callee"], question["args"], question["kwargs"])
        try:
            self.sock.setblocking(True)
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            send_frame(self.sock, wire.encode({"seq": seq, **reply}))
            self.sock.setblocking(False)
        except OSError:  # the worker is gone, or not reading
            self.retire()
            raise LinkClosed from None


class Answer:
    """The callees the trusted side answers during one call: ``reply(name, args, kwargs)``
    gives ``{"ok": True, "value": ...}`` or ``{"ok": False, "error": {"type", "message"}}``."""

    def __init__(self, names: frozenset[str], reply: Callable[[str, list, dict], dict]):
        self.names = names
        self.reply = reply
        self.count = 0


def _decoded(frame: bytes, callee_frame: bool = False) -> Any:
    """A frame from the worker, plain data only; where the trusted side answers callees
    (``callee_frame``), a callee frame may also pass a torch module, read as wire.ModuleSeen
    (weights_from_torch's argument: its answer does not depend on it)."""
    try:
        return wire.decode(frame, max_header=wire.MAX_REPLY_HEADER)
    except wire.WireError as e:
        if callee_frame:
            try:
                message = wire.decode(frame, max_header=wire.MAX_REPLY_HEADER, opaque_modules=True)
            except Exception:
                message = None
            if type(message) is dict and "callee" in message:
                return message
        raise LinkViolation(f"a reply that is not plain data ({e})") from None
    except Exception as e:  # a decoder bug must not become the grader's failure either
        raise LinkViolation(f"an unreadable reply ({type(e).__name__})") from None
