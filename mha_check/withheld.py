"""The NumPy questions' rule, as mha-check applies it while their checks run.

Grading calls the NumPy questions (every function of multihead.py but parameter_counts) where
only NumPy and the standard library can be imported (``mha_grader/sandbox/worker/withheld.py``):
there torch's names refuse to be used and other libraries cannot be imported. mha-check runs in
the student's own Python, where torch may well be loaded (crosscheck.py needs it), so it makes
the same code fail the same way, naming the library: during a NumPy question's check, an import
written in a student file of a library beyond NumPy and the standard library fails, and so does
any torch function or tensor method called (a torch function mode).
"""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from typing import Any

from .imports import importer

ALLOWED = frozenset({"numpy", "multihead", "crosscheck", "__future__"})


class WithheldLibrary(ModuleNotFoundError):
    """A NumPy question's code reached a library that grading withholds from it."""

    def __init__(self, library: str):
        super().__init__(f"{library} is not available to the NumPy questions", name=library)
        self.library = library


def _torch_mode() -> Any:
    """A torch function mode that refuses every torch call, or None when torch is not loaded."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    from torch.overrides import TorchFunctionMode

    class Refuse(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raise WithheldLibrary("torch")

    return Refuse()


class NumpyOnly:
    """``with NumpyOnly(folder): check()``: the check fails where its code reaches beyond NumPy."""

    def __init__(self, folder: Path):
        self.folder = str(folder.resolve())
        self._import = builtins.__import__
        self._mode: Any = None

    def _guarded_import(self, name: str, globals: Any = None, *args: Any, **kwargs: Any) -> Any:
        level = kwargs.get("level", args[2] if len(args) > 2 else 0)
        top = name.split(".")[0] if type(name) is str else ""
        if not level and top and top not in ALLOWED and top not in sys.stdlib_module_names:
            if importer(self.folder) is not None:
                raise WithheldLibrary(top)
        return self._import(name, globals, *args, **kwargs)

    def __enter__(self) -> NumpyOnly:
        self._import = builtins.__import__  # whatever rule stands already is kept beneath
        builtins.__import__ = self._guarded_import
        self._mode = _torch_mode()
        if self._mode is not None:
            self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None
        builtins.__import__ = self._import
