"""Where an exception came from: the student's own line, never a traceback of mha-check."""

from __future__ import annotations

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


def exception_text(exc: BaseException) -> str:
    """`TypeError: message`, kept to one short paragraph."""
    message = " ".join(str(exc).split())
    if len(message) > 300:
        message = message[:300] + " ..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
