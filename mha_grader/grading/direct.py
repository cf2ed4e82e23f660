"""In-process stand-in for the sandboxed worker, for the project's own tests only.

It gives a plain Python function the exact calling semantics of a sandbox proxy: arguments and
results cross the wire format (so the callee gets copies and only plain data comes back), and
exceptions become ``errors.StudentCodeError`` subclasses. It provides no containment: the
grader never uses it on student code.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from .. import errors, shown
from ..sandbox.worker import inputs, origin, wire
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


def proxy(
    func: Callable, student_files: tuple[str, ...] = ("multihead.py", "crosscheck.py")
) -> Callable:
    """Wrap ``func`` so calling it behaves like calling a sandboxed student function."""

    def call(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = wire.decode(wire.encode((args, kwargs)), allow_modules=True)
        before = inputs.snapshot(args, kwargs)
        try:
            result = func(*args, **kwargs)
        except NotImplementedError:
            raise errors.NotAttempted(
                "still raises NotImplementedError: not attempted yet"
            ) from None
        except Exception as e:
            raise describe_exception(e, student_files) from None
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

    call.__name__ = getattr(func, "__name__", "proxy")
    call.inputs_modified = False
    call.many = many
    return call
