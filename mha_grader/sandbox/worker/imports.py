"""The import rule of the student's files, in the worker: what the trusted side sent with the
files (``IMPORTS`` and its message, from mha_check/questions.py, which mha-check applies too).

An ``import`` written in one of the student's files of a module outside the standard library and
that file's allowed packages fails at once with the reason; imports made by NumPy, torch or the
worker itself go through. The importing file is told by the frame running the import statement,
which the student's code can disguise: this rule keeps honest code as grading has it (no scipy,
no helper files), it is not the wall against code that hides what it uses.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.util
import os
import sys
from typing import Any

_MACHINERY = "<frozen importlib"


class ImportRule(importlib.abc.MetaPathFinder):
    """``table``: student file name -> the packages it may import besides the standard library;
    ``message``: the refusal, with ``{file}``, ``{name}`` and ``{allowed}``; ``home``: the folder
    of the student's files."""

    def __init__(self, table: dict, message: str, home: str):
        self.table = {f: tuple(a) for f, a in table.items() if type(a) in (list, tuple)}
        self.message = message if type(message) is str else "{file} may not import {name}"
        self.home = os.path.abspath(home)
        self._import = builtins.__import__

    def _importer(self, depth: int) -> str | None:
        frame = sys._getframe(depth)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not filename.startswith(_MACHINERY) and not filename.endswith(
                "importlib/__init__.py"
            ):
                if os.path.dirname(os.path.abspath(filename)) == self.home:
                    name = os.path.basename(filename)
                    return name if name in self.table else None
                return None
            frame = frame.f_back
        return None

    def _check(self, fullname: str, file: str | None) -> None:
        top = fullname.split(".")[0] if type(fullname) is str else ""
        if not top or top in sys.stdlib_module_names or top == "__future__" or file is None:
            return
        allowed = list(self.table[file])
        if top not in allowed and _exists(top, self):
            listed = ", ".join(allowed[:-1]) + f" and {allowed[-1]}" if len(allowed) > 1 else ""
            text = self.message.format(file=file, name=top, allowed=listed or "".join(allowed))
            raise ModuleNotFoundError(text, name=top)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        self._check(fullname, self._importer(2))
        return None

    def _guarded_import(self, name: str, globals: Any = None, *args: Any, **kwargs: Any) -> Any:
        level = kwargs.get("level", args[2] if len(args) > 2 else 0)
        if not level:
            self._check(name, self._importer(2))
        return self._import(name, globals, *args, **kwargs)

    def install(self) -> None:
        sys.meta_path.insert(0, self)
        builtins.__import__ = self._guarded_import


def _exists(name: str, rule: ImportRule) -> bool:
    """Whether a top-level module of this name can be found at all (a name that cannot, a typo
    such as ``numpyy``, gets Python's own "No module named" error instead of the rule's)."""
    if name in sys.modules:
        return True
    if getattr(rule, "_busy", False):
        return False
    rule._busy = True  # find_spec asks every finder, this one too
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
    finally:
        rule._busy = False
