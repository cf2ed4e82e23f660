"""Where an exception came from: the student's own line, never a traceback of mha-check."""

from __future__ import annotations

import builtins
import sys
import traceback
from pathlib import Path


def _in_folder(filename: str, folder: Path) -> bool:
    # Directly in the folder: its tests/ sub-folder holds the public tests, not student code.
    try:
        return Path(filename).resolve().parent == folder
    except (OSError, ValueError):
        return False


def student_frame(
    exc: BaseException, student_folder: Path, after_file: str | None = None
) -> traceback.FrameSummary | None:
    """The innermost frame of the student's code in `exc`'s traceback, or None.

    With `after_file` (a test file), only frames below that file's last frame count: a student
    frame there means the student's code raised; none means the test itself raised.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if after_file is not None:
        target = Path(after_file).resolve()
        last = max(
            (i for i, f in enumerate(frames) if Path(f.filename).resolve() == target), default=-1
        )
        frames = frames[last + 1 :]
    folder = student_folder.resolve()
    mine = [f for f in frames if _in_folder(f.filename, folder)]
    return mine[-1] if mine else None


def describe(frame: traceback.FrameSummary) -> str:
    """`multihead.py, line 12, in softmax: return e / s` for a student frame."""
    code = f": {frame.line.strip()}" if frame.line else ""
    return f"{Path(frame.filename).name}, line {frame.lineno}, in {frame.name}{code}"


# NumPy's modules that define its exception classes (its ufunc and memory errors in a private
# one, whose name changed in NumPy 2).
_NUMPY_MODULES = (
    "numpy.exceptions",
    "numpy.linalg",
    "numpy._core._exceptions",
    "numpy.core._exceptions",
)
_STUDENT_MODULES = ("multihead", "crosscheck")


def _is_numpys(cls: type) -> bool:
    """Whether ``cls`` is one of NumPy's own exception classes (the class itself, not a class
    derived from one)."""
    for name in _NUMPY_MODULES:
        module = sys.modules.get(name)
        if module is not None and any(v is cls for v in vars(module).values()):
            return True
    return False


def exception_name(exc: BaseException) -> str:
    """Where the exception's class comes from, and its name: `Python's TypeError`, `NumPy's
    AxisError`, `ShapeError (an exception class of your own)`, or `torch's OutOfMemoryError`."""
    cls = type(exc)
    name = cls.__name__
    if getattr(builtins, name, None) is cls:
        return f"Python's {name}"
    if _is_numpys(cls):
        return f"NumPy's {name}"
    top = str(cls.__module__).split(".")[0]
    if top in _STUDENT_MODULES or top == "__main__":
        return f"{name} (an exception class of your own)"
    return f"{top}'s {name}"


def exception_text(exc: BaseException) -> str:
    """`Python's TypeError: message`, kept to one short paragraph."""
    message = " ".join(str(exc).split())
    if len(message) > 300:
        message = message[:300] + " ..."
    name = exception_name(exc)
    return f"{name}: {message}" if message else name
