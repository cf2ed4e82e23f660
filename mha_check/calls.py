"""Which of the student's functions a check's function really called, and on what kind of input.

``mha-check`` says a composite question is "waiting on" a callee only where the composite called
that callee during its failing checks (grading carries an error forward only through calls that
happened) and on a kind of input where the callee fails its own checks. A call's *kind* is the
number of axes of each array argument: ``attention`` on one head's 2-D slices is another kind
than ``attention`` on stacked heads.

The calls are seen by replacing the callees, for the duration of a check, wherever the
composite can reach them: any name of the student's modules bound to one (aliases too) and the
composite's closure. A callee kept elsewhere (a default argument) is not seen. A check passes or
fails by a plain run, without a recorder (``runner.py``); a composite's check is run once more
with one, to learn its calls, and fails if only one of the two runs passes (as grading charges
a composite whose watched call differs from its plain one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .forms import right_form

Kind = tuple  # the number of axes of each positional argument (None: not an array)


def kind(args: tuple) -> Kind:
    return tuple(getattr(a, "ndim", None) if hasattr(a, "shape") else None for a in args)


class Recorder:
    """Record the calls of ``targets`` (name -> the student's function) made through ``spaces``
    (module namespaces) and ``cells`` (a closure) while the recorder is entered."""

    def __init__(self, targets: dict[str, Callable], spaces: list[dict], cells: tuple = ()):
        self.targets = {n: f for n, f in targets.items() if callable(f)}
        self.spaces = spaces
        self.cells = cells or ()
        self.kinds: dict[str, set[Kind]] = {}  # name -> kinds of input it was called on
        # False once a callee returned a result of another form than its contract's (forms.py)
        self.callee_forms_right = True
        self._undo: list[Callable[[], None]] = []

    def _stand_in(self, name: str, original: Callable) -> Callable:
        def stand_in(*args: Any, **kwargs: Any) -> Any:
            self.kinds.setdefault(name, set()).add(kind(args))
            result = original(*args, **kwargs)
            if right_form(name, args, kwargs, result) is False:
                self.callee_forms_right = False
            return result

        stand_in.__wrapped__ = original
        return stand_in

    def __enter__(self) -> Recorder:
        by_id = {id(f): (n, f) for n, f in self.targets.items()}
        made = {id(f): self._stand_in(n, f) for n, f in self.targets.items()}
        for space in self.spaces:
            for key, value in list(space.items()):
                if id(value) in by_id and value is by_id[id(value)][1]:
                    space[key] = made[id(value)]
                    self._undo.append(lambda s=space, k=key, v=value: s.__setitem__(k, v))
        for cell in self.cells:
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if id(value) in by_id and value is by_id[id(value)][1]:
                cell.cell_contents = made[id(value)]
                self._undo.append(lambda c=cell, v=value: setattr(c, "cell_contents", v))
        return self

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()
