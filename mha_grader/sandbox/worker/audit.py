"""Which libraries beyond NumPy and the standard library a call into student code reached.

The NumPy questions (every function of multihead.py but parameter_counts) must be written with
NumPy alone. This runs inside the worker around the calls the trusted side asks it to audit and
reports plain data: the names of the libraries reached. What to do about them is decided on the
trusted side (points.toml's ``[policy] numpy_only``).

Three cheap signals, none of which costs a call that stays within NumPy more than a few
microseconds:
- torch (imported by the zygote before any student code, so never "newly imported"): a
  ``TorchFunctionMode`` is active during the call; any torch function or tensor method the call
  runs passes through it;
- a module imported during the call (``sys.modules`` grows): its top-level package;
- a library the student's module holds at its top level (``import scipy``, ``from jax import
  numpy``): only then, a profile hook watches the call for code of those packages.
It is an audit for honest mistakes, not a wall: code that works hard to hide what it uses can.
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

ALLOWED = frozenset({"numpy", "multihead", "crosscheck", "worker", "builtins", "__main__"})
MAX_NAMES = 8  # libraries reported per function: a reply never grows with what the code imports


def _top(name: Any) -> str:
    return name.split(".", 1)[0] if type(name) is str else ""


def foreign(name: str) -> bool:
    """Whether a top-level package name is beyond NumPy and the standard library."""
    return bool(name) and name not in ALLOWED and name not in sys.stdlib_module_names


def held_by(module: types.ModuleType) -> set[str]:
    """Libraries beyond NumPy and the standard library that a student module holds at its top
    level (modules, or functions and classes taken from them)."""
    found = set()
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            name = _top(getattr(value, "__name__", ""))
        else:
            name = _top(getattr(value, "__module__", ""))
        if foreign(name):
            found.add(name)
    return found


class _Watch:
    """A profile hook that notes calls into code of the watched packages (set only when the
    student's module holds such a package: this is the one signal that costs time)."""

    def __init__(self, packages: set[str]):
        self.packages = packages
        self.seen: set[str] = set()

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            name = _top(frame.f_globals.get("__name__"))
        elif event == "c_call":
            name = _top(getattr(arg, "__module__", None))
            if not name:
                owner = getattr(arg, "__self__", None)
                if isinstance(owner, types.ModuleType):
                    name = _top(owner.__name__)
                elif owner is not None:
                    name = _top(type(owner).__module__)
        else:
            return
        if name in self.packages:
            self.seen.add(name)


_MODE: list[type] = []  # the TorchFunctionMode class, made once torch is there


def _torch_mode() -> Any:
    """A TorchFunctionMode that notes any torch call, or None when torch is not loaded."""
    if "torch" not in sys.modules:
        return None
    if not _MODE:
        from torch.overrides import TorchFunctionMode

        class Seen(TorchFunctionMode):
            used = False

            def __torch_function__(self, func, types, args=(), kwargs=None):
                self.used = True
                return func(*args, **(kwargs or {}))

        _MODE.append(Seen)
    return _MODE[0]()


class Watch:
    """``with Watch(held) as seen: call()``: afterwards ``seen`` holds the top-level names of the
    libraries the call reached (``held``: what the student's module holds, ``held_by``)."""

    def __init__(self, held: set[str]):
        self.held = held - {"torch"}
        self.seen: set[str] = set()

    def __enter__(self) -> set[str]:
        self.before = len(sys.modules)  # a dict keeps its order: new modules come last
        self.mode = _torch_mode()
        if self.mode is not None:
            self.mode.__enter__()
        self.hook = _Watch(self.held) if self.held else None
        if self.hook is not None:
            sys.setprofile(self.hook)
        return self.seen

    def __exit__(self, *exc: object) -> None:
        if self.hook is not None:
            sys.setprofile(None)
            self.seen |= self.hook.seen
        if self.mode is not None:
            try:
                self.mode.__exit__(None, None, None)
            except Exception:  # the student's code left torch's mode stack in another state
                pass
            if self.mode.used:
                self.seen.add("torch")
        if len(sys.modules) > self.before:
            new = itertools.islice(list(sys.modules), self.before, None)
            self.seen |= {n for n in map(_top, new) if foreign(n)}
