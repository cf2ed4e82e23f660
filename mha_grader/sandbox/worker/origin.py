"""Whether an exception's class is one of NumPy's own, told by identity.

The worker imports this before any student code runs: NumPy's exception classes (those of
``numpy.exceptions``, ``numpy.linalg`` and NumPy's internal ufunc and memory errors) are held
here, with the names they had then. An exception is NumPy's only when its class *is* one of
them; a class of the student's, whatever it is called, whatever its ``__module__`` says and
whatever it derives from, is not. The trusted side shows a name from this record only when it is
in its own fixed list (``mha_grader.shown.NUMPY_EXCEPTIONS``).
"""

from __future__ import annotations

import sys

import numpy.exceptions  # noqa: F401  (loaded, so that its classes are held below)
import numpy.linalg  # noqa: F401

_MODULES = ("numpy.exceptions", "numpy.linalg", "numpy._core._exceptions", "numpy.core._exceptions")


def _numpy_classes() -> tuple[tuple[type, str], ...]:
    found: dict[int, tuple[type, str]] = {}
    for name in _MODULES:
        module = sys.modules.get(name)
        for value in list(vars(module).values()) if module is not None else ():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("numpy")
            ):
                found[id(value)] = (value, str(value.__name__))
    return tuple(found.values())


NUMPY_CLASSES = _numpy_classes()


def numpy_name(exc_type: type) -> str:
    """The name of NumPy's class when ``exc_type`` is that very class, else ""."""
    for cls, name in NUMPY_CLASSES:
        if exc_type is cls:
            return name
    return ""
