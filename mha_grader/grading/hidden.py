"""Run the hidden tests of one code question against a student's functions.

The hidden tests live in ``autograder/tests/<qid>.py`` in otter-grader's exception-based format
(``from otter.test_files import test_case``); they are parsed with otter's own
``ExceptionTestFile`` once per process. They run here, in the trusted process; the student's
functions arrive in ``env`` as proxies (see ``session.py``; ``direct.proxy`` in the project's
tests), so a call returns plain data or raises ``errors.StudentCodeError``. A test function
that judges a composite also declares a ``case`` parameter: it gets the case's ``context.Case``
(the policy it is graded under; what it carried forward comes back in it).

A question's points (``questions.POINTS``) are shared equally among its cases. A case's output
is a message for the student: the AssertionError text written by the tests (with the helpers of
``compare`` and ``shown``), or what the student's code did (not attempted, raised, timed out),
in the grader's words (``str`` of an ``errors.StudentCodeError``). It never shows the test's
source or values: otter's own failure message quotes the failing line, so it is not used.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from functools import cache

from mha_check.otter_format import exception_test_file_class
from mha_check.questions import CODE_QUESTIONS

from .. import paths
from ..errors import NotAttempted, StudentCodeError, StudentRaised
from ..outcomes import TestResult
from ..points import POINTS, POLICY
from .context import Case

log = logging.getLogger(__name__)

PASSED = "passed"
NEUTRAL_FAILURE = (
    "the grader could not check this result: your function returned something this test "
    "cannot use. Check the return type and shape against the docstring."
)
EMPTY_ASSERTION = "the result does not have the property this test checks."
READ_ONLY_HINT = (
    " Your code tried to change an input array in place; work on a copy instead "
    "(e.g. `x = x - x.max(...)` rather than `x -= ...`)."
)

_lock = threading.Lock()
_loaded: dict[str, object] = {}  # qid -> otter ExceptionTestFile, parsed once per process


def _test_file(qid: str):
    """The parsed hidden test file of a code question (cached; safe from several threads)."""
    if qid not in CODE_QUESTIONS:
        raise KeyError(f"{qid!r} is not a code question id")
    with _lock:
        if qid not in _loaded:
            # otter's test-file format alone: `import otter` would bring nbconvert and pandas
            ExceptionTestFile = exception_test_file_class()
            paths.ensure_solutions_importable()  # the hidden tests import `solutions`
            path = paths.HIDDEN_TESTS / f"{qid}.py"
            test_file = ExceptionTestFile.from_file(str(path))
            if test_file.name != qid or not test_file.test_cases:
                raise ValueError(f"{path}: expected name = {qid!r} and at least one test case")
            _loaded[qid] = test_file
        return _loaded[qid]


def case_names(qid: str) -> list[str]:
    """Result names of a question's cases, in file order: "<qid>: <case description>"."""
    return [f"{qid}: {tc.name}" for tc in _test_file(qid).test_cases]


def case_points(qid: str) -> float:
    """Points of each case of a question: the question's points shared equally."""
    return POINTS[qid] / len(_test_file(qid).test_cases)


def all_cases() -> dict[str, list[tuple[str, float]]]:
    """Every code question's cases as (name, max_score), in contract order."""
    return {qid: [(name, case_points(qid)) for name in case_names(qid)] for qid in CODE_QUESTIONS}


def missing_results(qid: str, why: str) -> list[TestResult]:
    """All cases of a question with score 0 and the message ``why`` (e.g. a missing file)."""
    share = case_points(qid)
    return [TestResult(name, qid, 0.0, share, why) for name in case_names(qid)]


def student_message(e: StudentCodeError) -> str:
    """What to tell the student when a call into their code did not return a usable value:
    ``str(e)`` is already in the grader's words (the exception's kind and place, never its
    message, which could quote the hidden inputs it was given)."""
    text = str(e)
    if e.inputs:
        text += f" (on {e.inputs})"
    if isinstance(e, StudentRaised) and "read-only" in e.message:
        text += READ_ONLY_HINT
    if e.hint:
        text += f". {e.hint}"
    return text


@cache
def _parameters(test_func: Callable) -> tuple[str, ...]:
    return tuple(inspect.signature(test_func).parameters)


def _call(tc, env: Mapping[str, Callable], case: Case) -> None:
    """otter's ``call_func`` (each parameter gets the env entry of its name, ``env`` the whole
    env), with the test function's signature read once per process instead of once per call;
    a parameter named ``case`` gets the case's grading context."""
    given = {"env": env, "case": case}
    names = _parameters(tc.body.test_func)
    tc.body.test_func(**{n: given[n] if n in given else env.get(n, None) for n in names})


def _run_case(tc, env: Mapping[str, Callable], case: Case) -> tuple[bool, str, list[str], bool]:
    """(passed, output, tags, not attempted) of one case; a case that passed because an error
    was carried forward (``carry``) says so in its output and tags."""
    try:
        _call(tc, env, case)
    except AssertionError as e:
        return False, str(e) or EMPTY_ASSERTION, [], False
    except StudentCodeError as e:
        return False, student_message(e), [], isinstance(e, NotAttempted)
    except Exception as e:  # a bug in a test, or a value no check expected: never crash
        log.warning("hidden test %r raised %s", tc.name, type(e).__name__, exc_info=True)
        return False, NEUTRAL_FAILURE, [], False
    carried = case.carried
    if carried:
        text = " ".join(c.text for c in carried)
        return True, f"{PASSED}. {text}", [t for c in carried for t in c.tags], False
    return True, PASSED, [], False


def run_question(
    qid: str, env: Mapping[str, Callable], carry_forward: bool | None = None
) -> list[TestResult]:
    """Run every hidden case of ``qid``; each test function gets the env entries it names.
    ``carry_forward``: the policy (default: points.toml's)."""
    test_file = _test_file(qid)
    if env.get(qid) is None:
        return missing_results(qid, f"{qid} is not defined in {CODE_QUESTIONS[qid]}.")
    if carry_forward is None:
        carry_forward = POLICY.carry_forward
    share = case_points(qid)
    results = []
    for tc in test_file.test_cases:
        passed, output, tags, not_attempted = _run_case(tc, env, Case(carry_forward))
        score = share if passed else 0.0
        results.append(
            TestResult(
                f"{qid}: {tc.name}",
                qid,
                score,
                share,
                output,
                tags=tags,
                not_attempted=not_attempted,
            )
        )
    return results
