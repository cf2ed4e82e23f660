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
import importlib.abc
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .imports import importer

ALLOWED = frozenset({"numpy", "multihead", "crosscheck", "__future__"})


class WithheldLibrary(ModuleNotFoundError):
    """A NumPy question's code reached a library that grading withholds from it."""

    def __init__(self, library: str, message: str = ""):
        message = message or f"{library} is not available to the NumPy questions"
        super().__init__(message, name=library)
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


# -- multihead.py loaded as grading loads it for the NumPy questions ---------------------------
# There torch is *withheld* (mha_grader/sandbox/worker/withheld.py, which this mirrors: the
# worker's package is not in the students' bundle): ``import torch`` succeeds, so that a file
# importing it for parameter_counts loads, but every name of it is a stand-in that refuses to be
# called. A file that calls torch at its top level loads here and fails there: its NumPy
# questions are not graded.


WITHHELD = ("torch", "functorch", "torchgen")  # torch and the packages that come with it


class _Withheld(type):
    """A withheld torch name: its attributes are more of them; calling one raises."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _withheld(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise _refusal(cls)

    def __iter__(cls) -> Any:
        raise _refusal(cls)


def _refusal(cls: type) -> ModuleNotFoundError:  # grading's words for it
    message = f"{cls.__qualname__} is not available here: the NumPy questions run with NumPy alone"
    return WithheldLibrary("torch", message)


def _withheld(qualname: str) -> type:
    return _Withheld(qualname.rpartition(".")[2], (), {"__qualname__": qualname})


class _WithheldModule(ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _withheld(f"{self.__name__}.{name}")


class _WithheldTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.partition(".")[0] in WITHHELD:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> Any:
        return _WithheldModule(spec.name)

    def exec_module(self, module: Any) -> None:
        module.__path__ = []


def load_numpy_side(path: Path) -> tuple[ModuleType | None, BaseException | None]:
    """Load ``path`` (multihead.py) again, alone, as grading's NumPy workers import it: torch
    withheld, no crosscheck.py beside it (whatever crosscheck.py rebinds in the first copy does
    not reach this one), ``import multihead`` inside it finding this copy. The module, or what
    it raised."""
    source = path.read_bytes()
    real = {n: m for n, m in sys.modules.items() if n.partition(".")[0] in WITHHELD}
    own = {n: sys.modules.get(n) for n in ("multihead", "crosscheck")}
    finder = _WithheldTorch()
    for name in real:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    module = ModuleType(path.stem)
    module.__file__ = str(path)
    sys.modules.pop("crosscheck", None)
    sys.modules[path.stem] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the student's file may raise anything, even SystemExit
        return None, e
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n.partition(".")[0] in WITHHELD]:
            del sys.modules[name]
        sys.modules.update(real)
        for name, was in own.items():
            if was is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = was
    return module, None
