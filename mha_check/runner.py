"""Run one question's public test cases against the student's functions, and judge the outcome.

The test files are parsed with otter-grader's own ExceptionTestFile; each case is called here, so
that a hang is stopped, the student's output is captured, and a failure becomes a sentence.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from .calls import Recorder
from .dtypes import float_dtype_problem
from .forms import FORMED, right_form
from .limits import TimeLimitExceeded, call_limits, captured_output, limit_note
from .questions import CALLEES, CODE_QUESTIONS, NUMPY_QUESTIONS, SIGNATURES
from .results import QuestionResult, Status
from .tracing import describe, exception_text, student_frame
from .withheld import NumpyOnly, WithheldLibrary


def _check_name(test_func: Any) -> str:
    """`test_worked_values` -> `worked values`: which check failed, in words."""
    name = getattr(test_func, "__name__", "check")
    return name.removeprefix("test_").replace("_", " ")


def _missing_function(qid: str, params: list[str], env: dict[str, Any]) -> str | None:
    for p in params:
        if p in CODE_QUESTIONS and not callable(env.get(p)):
            found = "" if p not in env else f" (the name {p} is there, but it is not a function)"
            return f"{CODE_QUESTIONS[p]} defines no function {SIGNATURES[p]}{found}."
    return None


class _Outcome:
    """How one case ended: passed, not attempted, or failed with a message."""

    def __init__(self, status: Status, message: str = "", stop: bool = False):
        self.status, self.message, self.stop = status, message, stop


def _judge(
    qid: str, e: BaseException, test_path: str, folder: Path, seconds: float | None
) -> _Outcome:
    if isinstance(e, TimeLimitExceeded):
        frame = student_frame(e, folder)
        at = f" It was stopped at {describe(frame)}." if frame else ""
        return _Outcome(
            Status.FAILED,
            f"{qid} did not finish within {seconds:g} s: an endless loop, or a very slow one?{at}",
            stop=True,  # the other checks would most likely hang too
        )
    frame = student_frame(e, folder, after_file=test_path)
    if frame is None:  # the test itself raised
        if isinstance(e, AssertionError):
            message = str(e) or "a check failed"
            cause = e.__cause__ or e.__context__
            origin = student_frame(cause, folder) if cause is not None else None
            if origin is not None:
                message += f" (Your code raised it at {describe(origin)}.)"
            return _Outcome(Status.FAILED, message)
        return _Outcome(
            Status.FAILED,
            f"the check could not use what {qid} returned: {exception_text(e)}. Compare the "
            f"type and shape of your result with the docstring of {qid}.",
        )
    if isinstance(e, WithheldLibrary):
        return _Outcome(
            Status.FAILED,
            f"{qid} uses {e.library} (at {describe(frame)}): grading runs the NumPy questions "
            "where only NumPy and the standard library can be imported, so it fails there as "
            "here. Write it with NumPy (parameter_counts alone may use torch).",
        )
    if isinstance(e, NotImplementedError):
        if frame.name == qid:
            return _Outcome(Status.NOT_ATTEMPTED, stop=True)
        return _Outcome(
            Status.FAILED,
            f"{qid} calls {frame.name}, which is not written yet (it still raises "
            f"NotImplementedError at {describe(frame)}).",
            stop=True,
        )
    if isinstance(e, SystemExit):
        return _Outcome(
            Status.FAILED, f"your code called exit() or sys.exit() at {describe(frame)}."
        )
    return _Outcome(
        Status.FAILED,
        f"your code raised {exception_text(e)} at {describe(frame)}{limit_note(e)}.",
    )


class _FormWatch:
    """The question's function as a check calls it, noting a result of another form than the
    contract's for its arguments (forms.py), and failing the check on a float array of a dtype
    the contract does not allow (dtypes.py: grading's rule, which it applies to every case)."""

    def __init__(self, qid: str, fn: Any):
        self.qid, self.fn, self.wrong_form = qid, fn, False
        # forms: only a composite whose result has a contract form; dtypes: the NumPy
        # questions' arrays. A check that looks into its function's module (cross_check's)
        # gets the function itself.
        self.forms = qid in CALLEES and qid in FORMED
        self.dtypes = qid in NUMPY_QUESTIONS
        self.watching = callable(fn) and (self.forms or self.dtypes)
        self.__name__ = getattr(fn, "__name__", qid)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self.fn(*args, **kwargs)
        if self.forms and right_form(self.qid, args, kwargs, result) is False:
            self.wrong_form = True
        if self.dtypes:
            parts = result if isinstance(result, tuple | list) and len(result) <= 2 else [result]
            for part in parts:
                problem = float_dtype_problem(getattr(part, "dtype", None))
                if problem:
                    raise AssertionError(f"{self.qid} returned {problem}")
        return result


def _recorder(qid: str, env: dict[str, Any]) -> Recorder:
    """What one check sees of the calls the question's function makes of its callees."""
    fn = env.get(qid)
    targets = {c: env.get(c) for c in CALLEES.get(qid, ())}
    spaces = [getattr(f, "__globals__", None) for f in (fn, *targets.values())]
    unique = list({id(s): s for s in spaces if type(s) is dict}.values())
    return Recorder(targets, unique, getattr(fn, "__closure__", None) or ())


def _rule(qid: str, folder: Path) -> Any:
    """Grading's NumPy-only rule around a NumPy question's check (withheld.py)."""
    return NumpyOnly(folder) if qid in NUMPY_QUESTIONS else contextlib.nullcontext()


def _attempt(
    qid: str, case: Any, env: dict[str, Any], test_path: str, folder: Path, seconds: float | None
) -> tuple[_Outcome, bool]:
    """One plain run of a case (the question's function checked for its result's dtype, not
    watched): how it ended, and whether it ran out of time."""
    checked = _FormWatch(qid, env.get(qid))  # in the check's env only, never in a module
    try:
        with call_limits(seconds), _rule(qid, folder):
            case.call_func({**env, qid: checked} if checked.watching else env)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the student's code may raise anything, even SystemExit
        return _judge(qid, e, test_path, folder, seconds), isinstance(e, TimeLimitExceeded)
    return _Outcome(Status.PASSED), False


UNSTEADY = (
    "{qid} passes this check when run plainly but fails it when run again with grading's "
    "record of which of your functions it calls: grading charges that. It must compute the "
    "same however it is called (no looking at who called it, or at whether a function is still "
    "the one your file defined) and depend on its inputs alone (nothing kept between calls, no "
    "random numbers)."
)


def _watched_calls(
    qid: str,
    case: Any,
    env: dict[str, Any],
    folder: Path,
    seconds: float | None,
    plain: _Outcome,
    result: QuestionResult,
) -> tuple[dict[str, set], bool]:
    """The case run again with the composite's callees watched (what it prints then is not
    kept), as grading watches them: which callees it calls in a failing case, and on what kinds
    of input; and whether it passes or fails as in the plain run. A composite that passes only
    one of the two computes otherwise when watched: no callee is named for its failure."""
    callees = _recorder(qid, env)
    watched = _FormWatch(qid, env.get(qid))  # attention, multi_head_attention: with a form
    with captured_output():
        try:
            with call_limits(seconds), callees, _rule(qid, folder):
                case.call_func({**env, qid: watched} if watched.watching else env)
        except KeyboardInterrupt:
            raise
        except BaseException:  # the student's code may raise anything, even SystemExit
            passed = False
        else:
            passed = True
    if passed or plain.status is Status.PASSED:
        return {}, passed == (plain.status is Status.PASSED)
    if watched.wrong_form and callees.callee_forms_right:
        result.own_form = True  # its own result's form is wrong, its callees' right
    return callees.kinds, True


def run_question(
    qid: str, test_file: Any, env: dict[str, Any], folder: Path, seconds: float | None
) -> QuestionResult:
    """Run every case of `test_file` (an otter ExceptionTestFile) for question `qid`."""
    cases = [tc.body for tc in test_file.test_cases]
    result = QuestionResult(qid, Status.PASSED, total=len(cases))
    failures: list[str] = []
    outputs: list[str] = []
    for case in cases:
        missing = _missing_function(qid, case._get_func_params(), env)
        if missing:
            return QuestionResult(qid, Status.FAILED, missing, total=len(cases))
        # A plain run, the student's functions in place exactly as in any run of theirs, is what
        # passes or fails; a failing composite is run once more, watched, only to learn which
        # callees it calls (grading does the same: mha_grader/grading/carry.py).
        with captured_output() as out:
            outcome, timed_out = _attempt(qid, case, env, test_file.path, folder, seconds)
        outputs.append(out.getvalue())
        kinds: dict = {}
        if qid in CALLEES and not timed_out and outcome.status is not Status.NOT_ATTEMPTED:
            kinds, steady = _watched_calls(qid, case, env, folder, seconds, outcome, result)
            if not steady:
                outcome = _Outcome(Status.FAILED, UNSTEADY.format(qid=qid))
        if outcome.status is Status.FAILED:
            for name, found in kinds.items():
                result.called.setdefault(name, set()).update(found)
            check = f"check '{_check_name(case.test_func)}': {outcome.message}"
            result.failing_calls.append((frozenset(kinds), check))
        if outcome.status is Status.NOT_ATTEMPTED:
            return QuestionResult(qid, Status.NOT_ATTEMPTED, total=len(cases))
        if outcome.status is Status.PASSED:
            result.passed += 1
        else:
            failures.append(f"check '{_check_name(case.test_func)}': {outcome.message}")
        if outcome.stop:
            break
    result.output = "".join(outputs)
    if failures:
        result.status = Status.FAILED
        result.message = failures[0]
        if len(failures) > 1:
            result.message += f" ({len(failures) - 1} more check(s) failed; fix this one first.)"
    return result
