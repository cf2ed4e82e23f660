"""In-process stand-in for the sandboxed worker, for the project's own tests only.

It gives a plain Python function the exact calling semantics of a sandbox proxy: arguments and
results cross the wire format (so the callee gets copies and only plain data comes back), and
exceptions become ``errors.StudentCodeError`` subclasses; ``observe`` and ``with_callees`` see
and answer a composite's callee calls with the worker's own ``Callees``. It provides no
containment: the grader never uses it on student code. Calls are made one at a time (a lock):
a composite's stand-ins live in its module's namespace while it runs, which another thread's
call must not meet.
"""

from __future__ import annotations

import inspect
import threading
import traceback
from collections.abc import Callable
from typing import Any

from .. import errors, shown
from ..calls import CalleeCall, Observed
from ..sandbox.worker import inputs, origin, wire
from ..sandbox.worker.callees import Callees
from .replies import not_plain_data


def describe_exception(
    e: BaseException, student_files: tuple[str, ...] = ()
) -> errors.StudentRaised:
    """Turn an exception raised by student code into a StudentRaised with the student's line."""
    where = place = ""
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        name = frame.filename.rsplit("/", 1)[-1]
        if name in student_files:
            where = f"{name}, line {frame.lineno}: {(frame.line or '').strip()}"
            place = shown.place_text(name, frame.lineno or 0, frame.line or "")
            break
    mro = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
    numpy = origin.numpy_name(type(e))
    return errors.StudentRaised(type(e).__name__, mro, str(e)[:500], where, place, numpy=numpy)


_one_at_a_time = threading.RLock()


def proxy(
    func: Callable, student_files: tuple[str, ...] = ("multihead.py", "crosscheck.py")
) -> Callable:
    """Wrap ``func`` so calling it behaves like calling a sandboxed student function."""

    def call(*args: Any, **kwargs: Any) -> Any:
        with _one_at_a_time:
            return plain_call(*args, **kwargs)

    def plain_call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = wire.decode(wire.encode((args, kwargs)), allow_modules=True)
        before = inputs.snapshot(args, kwargs)
        try:
            result = func(*args, **kwargs)
        except NotImplementedError:
            raise errors.NotAttempted(
                "still raises NotImplementedError: not attempted yet"
            ) from None
        except Exception as e:
            raised = describe_exception(e, student_files)
            raised.inputs = shown.inputs(args)  # as the sandbox session tells it
            raise raised from None
        if inputs.modified(before):
            call.inputs_modified = True  # as a sandbox proxy records it
        try:
            return wire.decode(wire.encode(result))
        except wire.WireError as e:
            raise errors.BadResult(not_plain_data(str(e))) from None

    def many(calls: list[tuple[tuple, dict]]) -> list[Any]:
        results: list[Any] = []
        for a, k in calls:
            try:
                results.append(call(*a, **k))
            except errors.StudentCodeError as e:
                results.append(e)
        return results

    def targets(names: tuple[str, ...]) -> dict[str, Callable]:
        """The functions the names stand for: the env's (``bind``), else the function's own
        module's."""
        found = {}
        for name in names:
            sibling = (call.siblings or {}).get(name)
            f = getattr(sibling, "func", None) if sibling is not None else None
            f = f if f is not None else getattr(func, "__globals__", {}).get(name)
            if callable(f):
                found[name] = f
        return found

    def spaces() -> list[dict]:
        """The namespaces a callee's name is replaced in: the function's own module's and its
        siblings' (the worker replaces it in every module of the student's), also behind a
        decorator (``torch.inference_mode()`` wraps a function in torch's own module)."""
        found: dict[int, dict] = {}
        funcs = [func] + [getattr(p, "func", None) for p in (call.siblings or {}).values()]
        for f in funcs:
            f = inspect.unwrap(f) if callable(f) else f
            space = getattr(f, "__globals__", None)  # a partial has none: no call is seen
            if isinstance(space, dict):
                found.setdefault(id(space), space)
        return list(found.values())

    def callees(names, ask=None) -> Callees:
        return _OwnThreadCallees(
            targets(tuple(names)),
            spaces(),
            getattr(func, "__closure__", None) or (),
            _record,
            ask,
        )

    def observe(args: tuple, kwargs: dict, names: tuple[str, ...]) -> Observed:
        watch = callees(names)
        with _one_at_a_time:
            try:
                with watch:
                    value: Any = call(*args, **kwargs)
            except errors.StudentCodeError as e:
                value = e
        return Observed(value, [_callee_call(c) for c in watch.calls], not watch.overflow)

    def with_callees(args: tuple, kwargs: dict, answer: Callable, names) -> Any:
        def ask(question: dict) -> dict:
            reply = answer(question["callee"], question["args"], question["kwargs"])
            return wire.decode(wire.encode(reply))  # copies, as the channel gives them

        with _one_at_a_time, callees(names, ask):
            return call(*args, **kwargs)

    call.__name__ = getattr(func, "__name__", "proxy")
    call.inputs_modified = False
    call.many = many
    call.func = func
    call.siblings = None  # the env it belongs to (``bind``)
    call.observe = observe
    call.with_callees = with_callees
    call.fresh = lambda args, kwargs: call(*args, **kwargs)  # no state to leave behind here
    return call


class _OwnThreadCallees(Callees):
    """In process, the callees' names are replaced in module dicts every thread reads (the
    project's tests run hidden tests from several threads, the trusted side calling the
    reference's functions by the same names meanwhile): only the thread that made the watched
    or answered call sees the stand-ins; any other calls the function itself. (In a worker
    every thread the student's code starts sees them: there the names are the student's.)"""

    def __enter__(self) -> Callees:
        self._owner = threading.get_ident()
        return super().__enter__()

    def _stand_in(self, name: str, original: Callable) -> Callable:
        stand_in = super()._stand_in(name, original)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != self._owner:
                return original(*args, **kwargs)
            return stand_in(*args, **kwargs)

        guarded.__name__ = stand_in.__name__
        guarded.__wrapped__ = original
        return guarded


def bind(env: dict[str, Callable]) -> dict[str, Callable]:
    """Tell each proxy of ``env`` its siblings: the callees a composite's calls are seen by."""
    for p in env.values():
        if hasattr(p, "siblings"):
            p.siblings = env
    return env


def _record(e: BaseException) -> dict:
    """An exception as the worker's error record (worker/child.py's ``_describe``)."""
    if isinstance(e, NotImplementedError):
        return {"kind": "not_attempted", "type": "NotImplementedError", "mro": [], "message": ""}
    mro = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
    return {"kind": "raised", "type": type(e).__name__, "mro": mro, "message": str(e)[:500]}


def _callee_call(record: dict) -> CalleeCall:
    name = record["name"]
    if record.get("plain") is False:
        return CalleeCall(name, None)
    args, kwargs = record["args"]
    if record["ok"]:
        return CalleeCall(name, args, kwargs, value=record["value"])
    error = record["error"]
    if error["kind"] == "not_attempted":
        found: errors.StudentCodeError = errors.NotAttempted("still raises NotImplementedError")
    else:
        found = errors.StudentRaised(error["type"], error["mro"], error["message"])
    return CalleeCall(name, args, kwargs, error=found)
