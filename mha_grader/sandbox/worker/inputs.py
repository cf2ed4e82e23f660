"""Did a call change its input arrays in place? (The contract: inputs are never modified.)

Used inside the worker, around every call into student code, and by ``direct.proxy``. The
worker received copies, so the grader's own arrays are safe either way; this only tells the
tests that the student's function would have changed its caller's data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Snapshot = list[tuple[str, np.ndarray, tuple, str, bytes]]


def snapshot(args: tuple, kwargs: dict) -> Snapshot:
    """The arrays a call is given (also inside lists and tuples), with their state now."""
    found: Snapshot = []

    def visit(value: Any, label: str, depth: int) -> None:
        if type(value) is np.ndarray:
            found.append((label, value, value.shape, value.dtype.str, value.tobytes()))
        elif type(value) in (list, tuple) and depth < 2:
            for item in value:
                visit(item, label, depth + 1)

    for i, value in enumerate(args):
        visit(value, f"argument {i + 1}", 0)
    for key, value in kwargs.items():
        visit(value, f"argument {key}", 0)
    return found


def modified(before: Snapshot) -> list[str]:
    """Labels of the arguments whose arrays changed (values, shape or dtype) since ``before``."""
    return sorted(
        {
            label
            for label, arr, shape, dtype, data in before
            if arr.shape != shape or arr.dtype.str != dtype or arr.tobytes() != data
        }
    )
