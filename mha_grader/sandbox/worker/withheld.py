"""The NumPy questions' wall: in their workers, NumPy and the standard library alone exist.

The NumPy questions (every function of multihead.py but parameter_counts) are called in workers
forked from a zygote that never imported torch (``zygote.py`` forks it before torch comes in).
There, this finder stands first on ``sys.meta_path`` for the whole life of the process, whoever
imports: a module that would come from outside the standard library's and NumPy's folders
(where it is decides, not its name) cannot be imported at all, the student's own excepted; and
torch, which multihead.py may import for parameter_counts, is *withheld*: its import succeeds,
so that the file loads, but what it gives is a stand-in whose every use raises. Nothing of
torch is in the process to be reached another way (``sys.modules``, the garbage collector,
``torch._C``); where the layer allows, its files are not even readable (``contain.py``).

The stand-in's names are classes of a metaclass that refuses to be called: ``torch.Tensor`` in
an ``isinstance`` test is simply never matched, ``class M(torch.nn.Module)`` still defines a
class, and ``torch.tensor(x)``, ``torch.softmax(...)`` raise ModuleNotFoundError.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from typing import Any

WITHHELD = ("torch", "functorch", "torchgen")  # torch and the packages that come with it
# What a NumPy worker may import wherever it is: the student's modules (by the names the grader
# gives them) and the worker's own package; anything else only from the standard library's
# folders or NumPy's (``roots``).
ALLOWED = frozenset({"multihead", "crosscheck", "worker"})
REFUSED = "{name} cannot be imported here: the NumPy questions run with NumPy alone"


class _Refused(type):
    """The metaclass of a withheld name: any attribute is another withheld name; calling one,
    or using it as a number or a container, raises."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _name(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise ModuleNotFoundError(_MESSAGE.format(name=cls.__qualname__), name="torch")

    def __iter__(cls):
        raise ModuleNotFoundError(_MESSAGE.format(name=cls.__qualname__), name="torch")


_MESSAGE = "{name} is not available here: the NumPy questions run with NumPy alone"


def _name(qualname: str) -> type:
    return _Refused(qualname.rpartition(".")[2], (), {"__qualname__": qualname})


class _WithheldModule(type(sys)):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _name(f"{self.__name__}.{name}")


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return _WithheldModule(spec.name)

    def exec_module(self, module: Any) -> None:
        module.__path__ = []  # a package: ``import torch.nn`` finds a withheld torch.nn


class NumpyOnly(importlib.abc.MetaPathFinder):
    """``allowed``: the top-level names importable wherever they are (the student's modules, the
    worker's own package); ``roots``: the folders whose modules may be imported (the standard
    library's, NumPy's); ``message``: the refusal of any other module, with ``{name}``. Where a
    module would come from decides, not its name."""

    def __init__(self, allowed: frozenset[str], roots: list[str], message: str):
        self.allowed = frozenset(allowed) | {"__future__"}
        self.roots = tuple(os.path.join(os.path.realpath(r), "") for r in roots)
        self.message = message
        self._busy = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        top = fullname.partition(".")[0] if type(fullname) is str else ""
        if top in WITHHELD:
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        if top in self.allowed or self._busy or fullname in sys.builtin_module_names:
            return None
        self._busy = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        finally:
            self._busy = False
        if spec is None:
            return None  # Python's own "No module named ..."
        where = spec.origin if spec.has_location else None
        if where is None and spec.submodule_search_locations:
            where = next(iter(spec.submodule_search_locations), None)
        if where is None or os.path.realpath(where).startswith(self.roots):
            return spec
        raise ModuleNotFoundError(self.message.format(name=top), name=top)


def locations() -> list[str]:
    """The folders of the withheld packages, found without importing them (to be hidden)."""
    found = []
    for name in WITHHELD:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for folder in (spec.submodule_search_locations or []) if spec else []:
            found.append(os.path.realpath(folder))
    return found


def packages() -> list[str]:
    """The folders of every other installed package (beside NumPy's, in the folders it was
    installed in), found without importing them: hidden as torch's are, so that taking the
    import wall off ``sys.meta_path`` from inside reaches no other library's files either.
    Single-file modules stay (a folder can be hidden, a file cannot)."""
    numpy = sys.modules.get("numpy")
    kept = {os.path.realpath(p) for p in getattr(numpy, "__path__", [])}
    sites = {os.path.dirname(p) for p in kept}
    kept |= {os.path.join(s, "numpy.libs") for s in sites}
    withheld = set(locations())
    found = []
    for site in sorted(sites):
        try:
            entries = sorted(os.listdir(site))
        except OSError:
            continue
        for entry in entries:
            path = os.path.realpath(os.path.join(site, entry))
            if path in kept or path in withheld or not os.path.isdir(path):
                continue
            if any(path == k or path.startswith(k + os.sep) for k in kept):
                continue
            found.append(path)
    return found


def roots() -> list[str]:
    """The folders a NumPy worker may import from: the standard library's and NumPy's."""
    paths = sysconfig.get_paths()
    found = [paths["stdlib"], paths["platstdlib"]]
    numpy = sys.modules.get("numpy")
    found += list(getattr(numpy, "__path__", []))
    return found


def install(allowed: frozenset[str], message: str) -> NumpyOnly:
    """Put the wall first on ``sys.meta_path``, for the rest of this process's life."""
    for name in list(sys.modules):
        if name.partition(".")[0] in WITHHELD:  # never the case in a NumPy zygote: belt and braces
            del sys.modules[name]
    finder = NumpyOnly(frozenset(allowed), roots(), message)
    sys.meta_path.insert(0, finder)
    return finder
