"""What mha-check says about one question."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_ATTEMPTED = "not attempted yet"
    UNAVAILABLE = "not checked"  # its file is missing or broken: see the message
    WAITING = "waiting"  # a function it calls fails its own checks: that one first
    ANSWERED = "answered"  # a written answer is there (graded later, not here)


DONE = (Status.PASSED, Status.ANSWERED)


@dataclass
class QuestionResult:
    qid: str
    status: Status
    message: str = ""  # for the student: what was expected and what their code did
    passed: int = 0  # checks passed, out of `total`
    total: int = 0
    output: str = ""  # what the student's code printed during the checks
    waiting_on: tuple[str, ...] = ()  # WAITING: the callees that fail their own checks
    # The callees its function called in its failing checks (calls.py), and on what kinds of
    # input (the number of axes of each array argument).
    called: dict = field(default_factory=dict)
    # In a failing check it returned a result of another form than the contract's while every
    # callee call returned the right form (forms.py): a mistake of its own, not one handed on.
    own_form: bool = False
    # Each failing check's callees (the names it called there) and what the student is told
    # of it: a check that fails without calling a callee cannot have been handed its mistake.
    failing_calls: list = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status in DONE
