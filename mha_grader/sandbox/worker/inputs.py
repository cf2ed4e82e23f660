"""Did a call change its inputs in place? (The contract: inputs are never modified.)

Used inside the worker, around every call into student code, and by ``direct.proxy``. The
worker received copies, so the grader's own arrays and modules are safe either way; this only
tells the tests that the student's function would have changed its caller's data: an array
(also inside lists and tuples) or a ``torch.nn.MultiheadAttention`` (its weights and layout).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

Snapshot = list[tuple[str, Callable[[], Any], Any]]  # (label, read the state, the state before)


def _array_state(a: np.ndarray) -> Callable[[], Any]:
    return lambda: (a.shape, a.dtype.str, a.tobytes())


def _module_state(m: Any, torch: Any) -> Callable[[], Any]:
    """The module's weights (read through torch's own ``state_dict``, not an attribute the
    student's code could replace on the instance) and its layout."""

    def read() -> Any:
        weights = torch.nn.Module.state_dict(m)
        return (
            m.batch_first,
            tuple(
                (k, tuple(v.shape), str(v.dtype), v.detach().cpu().numpy().tobytes())
                for k, v in weights.items()
            ),
        )

    return read


def _is_module(value: Any) -> Any:
    """torch, when ``value`` is a MultiheadAttention (torch is imported by then: the module
    was built from a message); None otherwise."""
    torch = sys.modules.get("torch")
    if torch is not None and type(value) is torch.nn.MultiheadAttention:
        return torch
    return None


def snapshot(args: tuple, kwargs: dict) -> Snapshot:
    """The arrays and modules a call is given (arrays also inside lists and tuples), with their
    state now."""
    found: Snapshot = []

    def visit(value: Any, label: str, depth: int) -> None:
        if type(value) is np.ndarray:
            read = _array_state(value)
        elif (torch := _is_module(value)) is not None:
            read = _module_state(value, torch)
        elif type(value) in (list, tuple) and depth < 2:
            for item in value:
                visit(item, label, depth + 1)
            return
        else:
            return
        found.append((label, read, read()))

    for i, value in enumerate(args):
        visit(value, f"argument {i + 1}", 0)
    for key, value in kwargs.items():
        visit(value, f"argument {key}", 0)
    return found


def modified(before: Snapshot) -> list[str]:
    """Labels of the arguments whose arrays (values, shape or dtype) or modules (weights or
    layout) changed since ``before``; one whose state can no longer be read counts as changed."""
    changed = set()
    for label, read, state in before:
        try:
            same = read() == state
        except Exception:
            same = False
        if not same:
            changed.add(label)
    return sorted(changed)
