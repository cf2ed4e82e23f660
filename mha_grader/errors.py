"""What a call into student code can end in, as the trusted tests see it.

A proxy for a student function either returns plain data or raises one of these. Tests and
diagnosis treat them as wrong answers; ``str(e)`` is the message for the student, always in the
grader's words (``shown``): none carries a traceback of the grader or text from the worker.
"""

from __future__ import annotations

import re

from .shown import exception_kind, raised_text


class StudentCodeError(Exception):
    """Base: the student's code did not return a usable value. ``str(e)`` is for the student;
    ``inputs`` (set by the session) describes the grader's inputs of the call by shape; ``hint``
    is a fixed sentence of the grader's that fits what happened (or "")."""

    inputs: str = ""
    hint: str = ""


class NotAttempted(StudentCodeError):
    """The stub still raises NotImplementedError."""


class StudentRaised(StudentCodeError):
    """The student's function raised an exception of its own.

    ``exc_type``, ``mro``, ``message``, ``where`` and ``numpy`` are what the worker reported:
    for trusted checks only (e.g. "the ValueError names the bad head count"), never shown.
    ``kind`` and ``place`` are what may be shown (see ``shown``); ``str(e)`` says both.
    """

    def __init__(
        self,
        exc_type: str,
        mro: list[str],
        message: str,
        where: str = "",
        place: str = "",
        kind: str = "",
        numpy: str = "",
    ):
        self.exc_type = exc_type  # e.g. "ValueError", or whatever a student's class is called
        self.mro = mro  # builtin base names, e.g. ["ValueError", "Exception", "BaseException"]
        self.message = message
        self.where = where  # "multihead.py, line 12: ..." as the worker reported it
        self.numpy = numpy  # the name of NumPy's class when it is NumPy's, else ""
        self.kind = kind or exception_kind(exc_type, mro, numpy)  # "Python's ValueError", ...
        self.place = place  # read from the submitted file by the trusted side, or ""
        super().__init__(raised_text(self.kind, place))

    def is_a(self, exc_type: type[BaseException]) -> bool:
        return exc_type.__name__ in self.mro


class CallTimeout(StudentCodeError):
    """The call ran longer than its wall-clock or CPU limit."""


class WorkerCrashed(StudentCodeError):
    """The worker process died (sys.exit, os._exit, a signal, memory limit) during the call."""


class BadResult(StudentCodeError):
    """The value returned is not plain data (e.g. a torch.Tensor or a custom object)."""


class ProtocolViolation(StudentCodeError):
    """The worker sent what the grader's worker code never sends (a forged or oversized reply):
    the student's code wrote to the grader's channel. The submission's session ends."""


class MissingFunction(StudentCodeError):
    """The student's file, or the function in it, is missing or failed to import."""


def mentions(text: str, word: str) -> bool:
    """Whether ``word`` occurs in an error message ``text`` as a whole word or number ("5" is
    not in "15"): what a check asks a ValueError's message to name (grading and diagnosis)."""
    return re.search(rf"(?<![\w.]){re.escape(word)}(?![\w.])", text) is not None
