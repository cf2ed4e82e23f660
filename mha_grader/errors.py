"""What a call into student code can end in, as the trusted tests see it.

A proxy for a student function either returns plain data or raises one of these. Tests and
diagnosis treat them as wrong answers with a message for the student; none carries a traceback
of the grader.
"""

from __future__ import annotations


class StudentCodeError(Exception):
    """Base: the student's code did not return a usable value. ``str(e)`` is for the student."""


class NotAttempted(StudentCodeError):
    """The stub still raises NotImplementedError."""


class StudentRaised(StudentCodeError):
    """The student's function raised an exception of its own."""

    def __init__(self, exc_type: str, mro: list[str], message: str, where: str = ""):
        self.exc_type = exc_type  # e.g. "ValueError"
        self.mro = mro  # builtin base names, e.g. ["ValueError", "Exception", "BaseException"]
        self.message = message
        self.where = where  # "multihead.py, line 12: <source line>" when the line is the student's
        at = f" ({where})" if where else ""
        super().__init__(f"raised {exc_type}: {message}{at}")

    def is_a(self, exc_type: type[BaseException]) -> bool:
        return exc_type.__name__ in self.mro


class CallTimeout(StudentCodeError):
    """The call ran longer than its wall-clock or CPU limit."""


class WorkerCrashed(StudentCodeError):
    """The worker process died (sys.exit, os._exit, a signal, memory limit) during the call."""


class BadResult(StudentCodeError):
    """The value returned is not plain data (e.g. a torch.Tensor or a custom object)."""


class MissingFunction(StudentCodeError):
    """The student's file, or the function in it, is missing or failed to import."""
