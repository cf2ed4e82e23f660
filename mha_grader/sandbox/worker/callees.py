"""The contract functions a called function calls in turn, seen from inside the worker.

During one call the trusted side may ask for the student's other contract functions (the
callees, e.g. ``attention`` inside ``multi_head_attention``) to be replaced by stand-ins wherever
the called function can reach them: every name in the student's modules bound to one of them
(whatever the name: an alias counts) and the called function's closure cells:

- ``observe``: each call of a callee runs the student's own function and is recorded (its
  arguments and its result, or how it failed), to be sent back with the reply: the trusted side
  then knows which calls really happened, on which inputs, and what they returned;
- ``inject``: each call of a callee is answered by the trusted side instead (a ``callee`` frame
  on the channel, then its answer): the student's function runs with the reference's callees,
  which never enter the sandbox, only their results on the inputs the student's code chose.

What a composite gives with stand-ins in place is never graded: the trusted side grades a plain
call on the same inputs, sent in the same exchange (``child.many``), and charges a composite
whose watched result differs (``grading/carry.py``). A callee kept where no stand-in reaches (a
default argument, an attribute of an object) is not seen: the trusted side then knows only that
no call was recorded, never that one happened. The in-process stand-in for the sandbox
(``mha_grader/grading/direct.py``) uses this same class, so that the project's tests see calls
exactly as grading does.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import Any

from . import wire

MAX_CALLS = 64  # callee calls recorded or answered during one call
MAX_RECORD_BYTES = 1 << 20  # all recorded arguments and results of one call, as the wire sends
# Exceptions an answer may ask the student's code to see (the reference's own, by name).
_RAISABLE = {"ValueError", "TypeError", "IndexError", "RuntimeError", "ZeroDivisionError"}


class Callees:
    """Replace the ``targets`` (callee name -> the student's function) wherever ``spaces``
    (namespaces: module dicts) and ``cells`` (the called function's closure) hold them, for the
    duration of one call."""

    def __init__(
        self,
        targets: dict[str, Any],
        spaces: list[dict],
        cells: tuple,
        describe: Callable[[BaseException], dict],
        ask: Callable[[dict], dict] | None = None,
    ):
        self.targets = {name: f for name, f in targets.items() if type(name) is str and callable(f)}
        self.spaces = [s for s in spaces if type(s) is dict]
        self.cells = cells or ()
        self.describe = describe  # an exception as an error record (child._describe)
        self.ask = ask  # inject: send a callee frame, return the answer frame
        self.calls: list[dict] = []
        self.overflow = False  # more calls, or more data, than are recorded
        self._bytes = 0
        self._undo: list[Callable[[], None]] = []

    def __enter__(self) -> Callees:
        names = {id(f): name for name, f in self.targets.items()}
        stand_ins = {id(f): self._stand_in(names[id(f)], f) for f in self.targets.values()}
        for space in self.spaces:
            for key, value in list(space.items()):
                if id(value) in stand_ins and value is self.targets[names[id(value)]]:
                    space[key] = stand_ins[id(value)]
                    self._undo.append(lambda s=space, k=key, v=value: s.__setitem__(k, v))
        for cell in self.cells:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if id(value) in stand_ins and value is self.targets[names[id(value)]]:
                cell.cell_contents = stand_ins[id(value)]
                self._undo.append(lambda c=cell, v=value: setattr(c, "cell_contents", v))
        return self

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def _stand_in(self, name: str, original: Callable) -> Callable:
        def stand_in(*args: Any, **kwargs: Any) -> Any:
            if self.ask is not None:
                return self._answered(name, args, kwargs)
            return self._observed(name, original, args, kwargs)

        stand_in.__name__ = getattr(original, "__name__", name)
        stand_in.__wrapped__ = original
        return stand_in

    def _observed(self, name: str, original: Callable, args: tuple, kwargs: dict) -> Any:
        arguments = _copy((args, kwargs))  # before the callee (or the caller) changes them
        try:
            value = original(*args, **kwargs)
        except BaseException as e:
            self._record({"name": name, "args": arguments, "ok": False}, error=e)
            raise
        self._record({"name": name, "args": arguments, "ok": True}, value=value)
        return value

    def _record(self, call: dict, value: Any = None, error: BaseException | None = None) -> None:
        if self.overflow or len(self.calls) >= MAX_CALLS:
            self.overflow = True
            return
        if error is not None:
            call["error"] = self.describe(error)
        else:
            call["value"] = _copy(value)
        try:
            data = wire.encode(call)
            wire.decode(data)  # what the trusted side accepts (no modules): else not sent
            size = len(data)
        except BaseException:  # not plain data: only that a call happened can be told
            call.pop("value", None)
            call["args"], call["plain"] = None, False
            size = 0
        if self._bytes + size > MAX_RECORD_BYTES:
            self.overflow = True
            return
        self._bytes += size
        self.calls.append(call)

    def _answered(self, name: str, args: tuple, kwargs: dict) -> Any:
        if len(self.calls) >= MAX_CALLS:
            raise RuntimeError(f"{name} was called more than {MAX_CALLS} times in one call")
        self.calls.append({"name": name})
        answer = self.ask({"callee": name, "args": list(args), "kwargs": kwargs})
        if answer.get("ok") is True:
            return answer.get("value")
        error = answer.get("error") if type(answer.get("error")) is dict else {}
        kind = error.get("type") if error.get("type") in _RAISABLE else "RuntimeError"
        raise getattr(builtins, kind)(str(error.get("message", ""))[:200])

    def reply_fields(self) -> dict:
        """What the reply carries: the recorded calls (observe), or only their count."""
        if self.ask is not None:
            return {"callees": len(self.calls)}
        fields: dict = {"calls": self.calls}
        if self.overflow:
            fields["calls_overflow"] = True
        return fields


def _copy(value: Any) -> Any:
    """A copy of plain data (arrays copied, containers rebuilt), so that what is recorded is
    what was passed at the time; anything else is kept as it is (and not sent)."""
    try:
        return wire.decode(wire.encode(value))
    except BaseException:
        return value


def in_modules(files: set[str], names: list) -> tuple[dict[str, Any], list[dict]]:
    """The student's functions of these names (from the modules of the student's files, the
    file that defines one first) and those modules' namespaces."""
    modules = [sys.modules.get(file.removesuffix(".py")) for file in sorted(files)]
    spaces = [vars(m) for m in modules if m is not None]
    targets: dict[str, Any] = {}
    for name in names:
        for space in spaces:
            f = space.get(name) if type(name) is str else None
            if callable(f) and name not in targets:
                targets[name] = f
    return targets, spaces
