"""The import rule of the student's files (``IMPORTS`` in questions.py), as mha-check applies it.

While the student's code runs, an ``import`` written in one of the student's files of a module
outside the standard library and that file's allowed packages fails at once with the reason,
as it does in grading (the worker applies the same table): a student whose machine has scipy,
or who keeps helpers in a file of their own, hears it here first. Imports made by NumPy or torch
themselves are theirs and go through.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from .questions import IMPORTS, import_refused

_IMPORT_MACHINERY = ("<frozen importlib", "importlib/__init__.py")


def importer(folder: str, depth: int = 2) -> str | None:
    """The student file (its name) whose code is running the current import, if any."""
    frame = sys._getframe(depth)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_IMPORT_MACHINERY[0]) and not filename.endswith(
            _IMPORT_MACHINERY[1]
        ):
            if os.path.dirname(os.path.abspath(filename)) == folder:
                name = os.path.basename(filename)
                return name if name in IMPORTS else None
            return None
        frame = frame.f_back
    return None


class ImportRule(importlib.abc.MetaPathFinder):
    """Refuse what the importing student file may not import: an ``import`` statement (through
    ``__import__``, also of a module imported before) and ``importlib.import_module`` (through
    the first finder of ``sys.meta_path``)."""

    def __init__(self, folder: Path, own: Path | None = None):
        """``folder``: where the student's files run from; ``own``: the student's folder, when
        they run from a copy of it (a file of theirs beside them is a module that exists)."""
        self.folder = str(folder.resolve())
        self.own = own
        self._import = builtins.__import__

    def _check(self, fullname: str, file: str | None) -> None:
        top = fullname.split(".")[0]
        if not top or top in sys.stdlib_module_names or top == "__future__" or file is None:
            return
        if top not in IMPORTS[file] and _exists(top, self):
            raise ModuleNotFoundError(import_refused(file, top), name=top)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        self._check(fullname, importer(self.folder))
        return None

    def _guarded_import(self, name: str, globals: Any = None, *args: Any, **kwargs: Any) -> Any:
        level = kwargs.get("level", args[2] if len(args) > 2 else 0)
        if not level:
            self._check(name, importer(self.folder))
        return self._import(name, globals, *args, **kwargs)

    def __enter__(self) -> ImportRule:
        sys.meta_path.insert(0, self)
        builtins.__import__ = self._guarded_import
        return self

    def __exit__(self, *exc: object) -> None:
        builtins.__import__ = self._import
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _exists(name: str, rule: ImportRule) -> bool:
    """Whether a top-level module of this name can be found at all (a name that cannot, a typo
    such as ``numpyy``, gets Python's own "No module named" error instead of the rule's)."""
    if name in sys.modules:
        return True
    own = rule.own
    if own is not None and ((own / f"{name}.py").is_file() or (own / name).is_dir()):
        return True  # a file of the student's own, left out of the copy they run from
    if getattr(rule, "_busy", False):
        return False
    rule._busy = True  # find_spec asks every finder, this one too
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
    finally:
        rule._busy = False
