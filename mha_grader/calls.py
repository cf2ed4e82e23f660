"""What a composite called of the student's other functions, as the trusted side sees it.

A proxy's ``observe`` runs the student's function and returns, beside its result, the calls it
made of the callees named (``CalleeCall``: arguments and result, or how the callee failed), as
the worker recorded them (``sandbox/worker/callees.py``). ``with_callees`` runs it with the
callees answered here instead, by ``answering`` reference functions: the reference never enters
the sandbox, only its results on the inputs the student's code chose.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import StudentCodeError

# What a callee that computes otherwise inside its composite than alone is told (carried-forward
# errors and the diagnosis both say it).
KEPT_BETWEEN_CALLS = (
    "something your code keeps between calls (a cache, a global setting) changes the result. "
    "Every call must depend on its inputs alone."
)

# What the trusted side answers at most: array entries in one callee call, and the length of any
# axis (attention's scores grow with the product of two axes).
MAX_ANSWER_ELEMENTS = 1 << 18
MAX_ANSWER_AXIS = 1 << 10
# The exceptions a reference may raise that the student's code is shown as themselves.
_RAISABLE = ("ValueError", "TypeError", "IndexError", "ZeroDivisionError")


@dataclass
class CalleeCall:
    """One call of a callee made by the student's function."""

    name: str
    args: tuple | None  # None: the arguments were not plain data (only the call is known)
    kwargs: dict = field(default_factory=dict)
    value: Any = None
    error: StudentCodeError | None = None

    @property
    def known(self) -> bool:
        return self.args is not None


@dataclass
class Observed:
    """A call of the student's function with the callee calls it made."""

    value: Any  # its result, or the StudentCodeError it ended in
    calls: list[CalleeCall]
    complete: bool = True  # False: more calls were made than recorded

    @property
    def failed(self) -> bool:
        return isinstance(self.value, StudentCodeError)

    def called(self, name: str) -> list[CalleeCall]:
        return [c for c in self.calls if c.name == name]


def _elements(value: Any) -> int:
    """Array entries in ``value`` (an axis longer than MAX_ANSWER_AXIS counts as too many)."""
    if isinstance(value, np.ndarray):
        return value.size if max(value.shape, default=0) <= MAX_ANSWER_AXIS else 1 << 62
    if type(value) in (list, tuple):
        return sum(_elements(v) for v in value)
    if type(value) is dict:
        return sum(_elements(v) for v in value.values())
    return 1


def contract_arguments(reference: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict, bool]:
    """A callee call's arguments as its contract has them (the reference's parameters): the
    positional ones it takes and the keywords it names, and whether the call passed more (a
    ``mask=None`` of the student's own, say). The reference never sees the extras; what the
    student's callee makes of them is checked against what it gives without them."""
    try:
        params = list(inspect.signature(reference).parameters.values())
    except (TypeError, ValueError):
        return tuple(args), dict(kwargs), False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = {p.name for p in params if p.kind is not p.POSITIONAL_ONLY}
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        kept_args = tuple(args)
    else:
        kept_args = tuple(args[: len(positional)])
    kept_kwargs = {k: v for k, v in kwargs.items() if k in names}
    extra = len(kept_args) < len(args) or len(kept_kwargs) < len(kwargs)
    return kept_args, kept_kwargs, extra


def answering(references: Mapping[str, Callable]) -> Callable[[str, list, dict], dict]:
    """A callee answer for ``with_callees``: the reference's result on the student's inputs,
    or the error it raises (by the name of a builtin exception, never its message's values)."""

    def answer(name: str, args: list, kwargs: dict) -> dict:
        reference = references.get(name)
        if reference is None:
            return {"ok": False, "error": {"type": "RuntimeError", "message": "not available"}}
        if _elements((args, kwargs)) > MAX_ANSWER_ELEMENTS:
            return {"ok": False, "error": {"type": "ValueError", "message": "inputs too large"}}
        args, kwargs, _ = contract_arguments(reference, tuple(args), dict(kwargs))
        try:
            return {"ok": True, "value": reference(*args, **kwargs)}
        except Exception as e:
            kind = type(e).__name__ if type(e).__name__ in _RAISABLE else "RuntimeError"
            return {"ok": False, "error": {"type": kind, "message": kind}}

    return answer
