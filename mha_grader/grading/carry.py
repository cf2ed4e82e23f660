"""Error carried forward (docs/contract.md §7): one bug is charged once, where it is.

A composite question calls other contract functions, its *callees* (``CALLEES`` in
``mha_check/questions.py``): attention calls softmax; multi_head_attention calls split_heads,
attention and merge_heads. A composite's hidden case grades a plain call of the student's
composite, its functions in place exactly as in any run of the student's; under the policy
(points.toml's ``[policy] carry_forward``) a second, watched call on the same inputs, in the
same exchange, tells which callees it really calls, on which inputs, and what they return
(``calls.Observed``). The watched call earns nothing of itself: whatever the composite can tell
about being watched (its callee's view of the caller's frame, whether ``softmax`` is still the
function its file defined, time, how often it was called) cannot buy points, since a watched
result other than the plain one is charged to the composite. Where the plain result differs from
the reference's, the case asks the examiners' question: is the composite right *given right
callees*? It calls the composite again, its callee calls answered on this side by the reference
(``with_callees``: the reference never enters the sandbox, only its results on the inputs the
student's code chose), and once more answered by what its own callees returned when watched
(``replaying``), which must give the plain result again: a composite that tells answered callees
from its own, and computes otherwise then, is not excused by them.

- Right given right callees, where a callee it called returned wrong values: the case keeps its
  points and names the callees whose mistake was not charged twice (``Carried``), once each
  such value is checked to be what that callee gives on its own, in a worker that has run
  nothing else (``fresh``): a value that only comes out after the composite ran is the
  composite's doing (state kept between calls), and charged to it.
- A callee it called that raised where the composite called it, as it does on its own, while
  the composite is right given right callees (its calls answered by the reference): the case
  keeps its points and names the callee (``Carried``, ``raised``): one bug charged once.
- A callee that is not written yet, hung, crashed, returned something of another form than its
  contract's, or a constant where the reference's result varies: the case could not be checked
  and earns nothing (``CouldNotCheck``: "your softmax is not written yet ...; write softmax
  first"). Points are earned: a submission that raises everywhere, or whose functions return
  constants, gets nothing.
- Otherwise the mistake is the composite's own: its first message stands. A composite that calls
  no callee is judged alone: nothing is said about callees it never called.
- A composite whose result is right only because a callee's mistake cancels one of its own
  (right with the student's callees, wrong with right ones) is charged: the two bugs hide each
  other, and fixing the callee would break it.
- A case carried to a callee that loses nothing of its own (every one of its cases passed, none
  carried further) is charged after all (``charge_uncharged``, once every question is graded):
  the callee's mistake shows only on the inputs the composite chose for it (a composite can
  hand it an input marked, in bits no comparison sees, for it to go wrong on), so carrying it
  would charge it nowhere. It is charged where it shows, to the composite.

Every check takes the hidden case's ``Case`` (``context.Case``): the policy it is graded under,
and where what it carried forward is noted for the runner (``hidden``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np

from ..calls import KEPT_BETWEEN_CALLS, CalleeCall, Observed, answering, contract_arguments
from ..errors import NotAttempted, StudentCodeError, StudentRaised
from ..outcomes import Tag, TestResult
from .context import Carried, Case


def record(case: Case, qid: str, callees: tuple[str, ...]) -> None:
    """Note that the current case passed given these wrong callees (for checks that judge a
    composite their own way, as cross_check's honesty)."""
    case.carry(Carried(qid, callees))


class CouldNotCheck(AssertionError):
    """A callee failed where the composite needs its result: the case earns nothing."""

    def __init__(self, qid: str, callee: str, what: str):
        self.callee = callee
        fix = "write" if what.startswith("is not written yet") else "fix"
        super().__init__(
            f"could not be checked: your {callee} {what}; {fix} {callee} first (this case "
            f"earns its points once {qid} can be checked)."
        )


def failure_words(e: StudentCodeError, qid: str) -> str:
    """How a callee failed where ``qid`` needs it, in the grader's words."""
    where = f"on the inputs {qid} gives it"
    if isinstance(e, NotAttempted):
        return "is not written yet"
    if isinstance(e, StudentRaised):
        return f"raises {where} ({e})"
    return f"does not return a usable value {where} ({e})"


def _leaves(value: Any) -> list[Any]:
    if type(value) in (tuple, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


def _form(got: Any, want: Any) -> bool:
    """Whether ``got`` has the form of the reference's ``want``: the same nesting of tuples
    and lists, float arrays of the same shapes."""
    if type(want) in (tuple, list):
        return (
            type(got) in (tuple, list)
            and len(got) == len(want)
            and all(_form(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, np.ndarray):
        return type(got) is np.ndarray and got.shape == want.shape and got.dtype.kind == "f"
    return True


def _constant(a: np.ndarray) -> bool:
    finite = a[np.isfinite(a)]
    return finite.size == 0 or bool(np.ptp(finite) == 0)


def _degenerate(got: Any, want: Any) -> str:
    """What makes a callee's result unusable to carry forward, or "": every array that varies
    in the reference's result holds one number (or no finite number) in the student's."""
    varying = [
        g
        for g, w in zip(_leaves(got), _leaves(want), strict=True)
        if isinstance(w, np.ndarray) and w.size > 1 and not _constant(w)
    ]
    if not varying or not all(_constant(g) for g in varying):
        return ""
    if all(not np.isfinite(g).any() for g in varying):
        return "returns nan or inf everywhere"
    if any(not np.isfinite(g).all() for g in varying):
        return "returns nothing but nan, inf or one repeated number"
    return "returns the same number everywhere"


def _close(got: Any, want: Any) -> bool:
    """The same values up to float32 rounding (relative to the reference's scale)."""
    for g, w in zip(_leaves(got), _leaves(want), strict=True):
        if isinstance(w, np.ndarray):
            g64 = np.asarray(g, dtype=np.float64)
            scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
            if not np.array_equal(np.isfinite(g64), np.isfinite(w)):
                return False
            ok = np.isfinite(w)
            if ok.any() and float(np.max(np.abs(g64[ok] - w[ok]))) > 1e-4 * scale:
                return False
    return True


def same(got: Any, want: Any) -> bool:
    """Whether two results of the student's function are the same (form and values)."""
    return _form(got, want) and _close(got, want)


COMPENSATED = (
    "your {qid} gives the right result here only because {who} {verb} wrong in a way that "
    "cancels a mistake of {qid}'s own: given a right {callees}, your {qid} would be wrong. "
    "Check what {qid} passes to {callees} and what it does with the result."
)
RETRIES = 8  # further fresh calls before a callee that differed inside its composite is steady
RANDOM = (
    "gives other values each time it is called on {where}: it depends on something besides its "
    "inputs (random numbers, such as a dropout, or the clock)"
)
EXTRA = (
    "your {callee} returned other values when your {qid} called it than it returns on its own "
    "on the same inputs: {qid} passes it more arguments than its contract's, and they change "
    "the result. That is {qid}'s doing: call {callee} with its contract's arguments only."
)
STATEFUL = (
    "your {callee} returned other values when your {qid} called it than it returns on its own "
    "on the same inputs: " + KEPT_BETWEEN_CALLS
)


def _verdict(qid: str, call: CalleeCall, references: Mapping[str, Callable]) -> tuple[str, Any]:
    """How one callee call went against the reference on the same inputs: ("right" | "wrong" |
    "failed" | "unknown", what to say when it failed)."""
    if not call.known:
        return "unknown", ""
    if call.error is not None:
        return "failed", failure_words(call.error, qid)
    args, kwargs, _ = contract_arguments(references[call.name], call.args, call.kwargs)
    try:
        want = references[call.name](*args, **kwargs)
    except Exception:  # the composite passed inputs the contract does not allow
        return "unknown", ""
    where = f"on the inputs {qid} gives it"
    if not _form(call.value, want):
        return "failed", f"returns something of another form than its contract's {where}"
    degenerate = _degenerate(call.value, want)
    if degenerate:
        return "failed", f"{degenerate} {where}"
    return ("right" if _close(call.value, want) else "wrong"), ""


def check(
    case: Case,
    qid: str,
    composite: Callable,
    args: tuple,
    verify: Callable[[Any, Any], None],
    expected: Any,
    callees: Mapping[str, tuple[Callable, Callable]],
) -> None:
    """One composite check of the hidden case ``case``: the student's ``composite`` (a proxy)
    on ``args``; ``verify(result, want)`` raises AssertionError unless ``result`` is ``want``;
    ``expected`` is the reference's result; ``callees`` maps a callee's name to (the student's
    proxy, the reference function).

    What is graded is a plain call, the student's functions in place exactly as in any run of
    theirs; the watched call (``observe``) only tells which callees it called, on what, and
    what they returned. A composite whose watched result is not its plain one is charged."""
    names = tuple(callees)
    references = {name: ref for name, (_, ref) in callees.items()}
    if not case.carry_forward:  # nothing is carried: the plain call is all there is
        plain = _plain(composite, args)
        if isinstance(plain, StudentCodeError):
            raise plain
        verify(plain, expected)
        return
    plain, observed = plain_and_observed(composite, args, names)
    if isinstance(plain, NotAttempted):
        raise plain  # not written yet: that is all there is to say
    steady = alike(plain, observed.value)
    verdicts = [(c, *_verdict(qid, c, references)) for c in observed.calls]
    failed = next(((c, what) for c, v, what in verdicts if v == "failed"), None)
    # Asked only where it decides something: a call of the composite, its callees answered.
    right_given_right = partial(_given_right, composite, args, verify, expected, references, names)
    if isinstance(plain, StudentCodeError):
        if steady and failed is not None:
            _past_raises(case, qid, right_given_right, callees, verdicts, failed)
            return
        raise plain
    try:
        verify(plain, expected)
        passed, failure = True, None
    except AssertionError as e:
        passed, failure = False, e
    if not steady:
        _random_callee(qid, observed, callees, references)
        raise AssertionError(unwatched(qid, names))
    if failed is not None and not passed:
        _past_raises(case, qid, right_given_right, callees, verdicts, failed)
        return
    wrong = list(dict.fromkeys(c.name for c, v, _ in verdicts if v == "wrong"))
    if passed and not wrong:
        return
    if not passed and not observed.calls:
        raise failure  # it called none of its callees: its own result is judged alone
    ok = right_given_right()
    if passed:
        if ok:
            return  # the callees' wrong values did not matter here
        raise AssertionError(compensated(qid, wrong))
    if not ok or not wrong:
        raise failure
    if not _replays(composite, args, observed, names, plain):
        raise failure  # answered as its own callees answered, it computes otherwise: its own
    for c, v, _ in verdicts:  # each carried value must be what the callee gives on its own
        if v == "wrong":
            _own_value(qid, c, callees[c.name][0], references[c.name])
    case.carry(Carried(qid, tuple(wrong)))


def _given_right(
    composite: Callable,
    args: tuple,
    verify: Callable[[Any, Any], None],
    expected: Any,
    references: Mapping[str, Callable],
    names: tuple[str, ...],
) -> bool:
    """Whether the composite is right with its callee calls answered by the reference."""
    try:
        verify(composite.with_callees(args, {}, answering(references), names), expected)
    except (AssertionError, StudentCodeError):
        return False
    return True


def _past_raises(
    case: Case,
    qid: str,
    right_given_right: Callable[[], bool],
    callees: Mapping[str, tuple[Callable, Callable]],
    verdicts: list,
    failed: tuple[CalleeCall, str],
) -> None:
    """Carry a case forward past callees that raised where the composite called them, or raise
    CouldNotCheck for the first callee that failed (``failed``). Carried when every callee that
    failed there raised (not a stub, a hang or an unusable value), none returned wrong values,
    the composite is right given right callees, and each such callee raises on its own too, in a
    fresh worker, on the inputs the composite gave it (an error that only comes after the
    composite ran is the composite's doing). The callee's mistake is charged to it alone."""
    raised = [c for c, v, _ in verdicts if v == "failed"]
    if (
        any(v == "wrong" for _, v, _ in verdicts)
        or not all(isinstance(c.error, StudentRaised) for c in raised)
        or not right_given_right()
        or not all(raises_alone(c, *callees[c.name]) for c in raised)
    ):
        raise CouldNotCheck(qid, failed[0].name, failed[1])
    case.carry(Carried(qid, tuple(dict.fromkeys(c.name for c in raised)), raised=True))


def raises_alone(call: CalleeCall, student: Callable, reference: Callable) -> bool:
    """Whether the student's callee raises when called alone, in a fresh worker, on the inputs
    the composite gave it (its contract's arguments only)."""
    args, kwargs, _ = contract_arguments(reference, call.args, call.kwargs)
    try:
        student.fresh(args, kwargs)
    except StudentRaised:
        return True
    except StudentCodeError:
        return False
    return False


def _random_callee(
    qid: str,
    observed: Observed,
    callees: Mapping[str, tuple[Callable, Callable]],
    references: Mapping[str, Callable],
) -> None:
    """Raise CouldNotCheck if a callee the composite called gives other values each time it is
    called alone on the inputs the composite gave it (a dropout): then that is why two calls
    of the composite differ, and the case could not be checked."""
    for call in observed.calls:
        if not call.known or call.error is not None:
            continue
        student, reference = callees[call.name][0], references[call.name]
        args, kwargs, _ = contract_arguments(reference, call.args, call.kwargs)
        if _varies(student, args, kwargs, _fresh(student, args, kwargs)):
            raise CouldNotCheck(qid, call.name, RANDOM.format(where=f"the inputs {qid} gives it"))


def plain_and_observed(
    composite: Callable, args: tuple, names: tuple[str, ...]
) -> tuple[Any, Observed]:
    """A plain call of the student's function (its result, or the StudentCodeError it raised)
    and a watched one on the same inputs (``observe``): in one exchange where the proxy can."""
    both = getattr(composite, "plain_and_observed", None)
    if both is not None:
        return both(args, {}, names)
    return _plain(composite, args), composite.observe(args, {}, names)


def _plain(composite: Callable, args: tuple) -> Any:
    """A plain call of the student's function: its result, or the StudentCodeError it raised."""
    try:
        return composite(*args)
    except StudentCodeError as e:
        return e


def alike(a: Any, b: Any) -> bool:
    """Whether two outcomes of one call on the same inputs agree: both failed in the same way
    (the same kind of error), or both returned the same result (the same nesting and types,
    arrays of one shape and dtype, numbers equal up to float32 rounding for arrays and a
    millionth for plain numbers)."""
    if isinstance(a, StudentCodeError) or isinstance(b, StudentCodeError):
        return type(a) is type(b)
    return _agree(a, b)


def _agree(a: Any, b: Any) -> bool:
    if type(a) in (tuple, list):
        return (
            type(b) is type(a)
            and len(a) == len(b)
            and all(_agree(x, y) for x, y in zip(a, b, strict=True))
        )
    if type(a) is dict:
        return type(b) is dict and a.keys() == b.keys() and all(_agree(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind == "f":
            return _close(b, a)
        return bool(np.array_equal(a, b))
    if isinstance(a, float | np.floating) and isinstance(b, float | np.floating):
        x, y = float(a), float(b)
        return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12)
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # something that will not say
        return False


def replaying(calls: list[CalleeCall]) -> Callable[[str, list, dict], dict]:
    """A callee answer for ``with_callees`` that gives back, call by call, what the student's own
    callees returned in the watched call (``calls``): a composite that computes the same
    whatever way its callees are reached gives its plain result again. A call of another callee,
    or on other inputs, than the watched call made in that place is not answered."""
    queue = list(calls)

    def answer(name: str, args: list, kwargs: dict) -> dict:
        call = queue.pop(0) if queue else None
        if (
            call is None
            or call.name != name
            or not call.known
            or call.error is not None
            or not _agree(tuple(call.args), tuple(args))
            or not _agree(dict(call.kwargs), dict(kwargs))
        ):
            return {"ok": False, "error": {"type": "RuntimeError", "message": "not available"}}
        return {"ok": True, "value": call.value}

    return answer


def _replays(composite: Callable, args: tuple, observed: Observed, names, plain: Any) -> bool:
    """Whether the composite, its callee calls answered with what its own callees returned when
    watched, gives its plain result: only then does what it gives with right callees say what
    it would give unwatched with right callees (a composite that tells how its callees are
    reached, and computes otherwise then, is not excused by them)."""
    if not observed.complete or not all(c.known for c in observed.calls):
        return False
    try:
        again = composite.with_callees(args, {}, replaying(observed.calls), names)
    except StudentCodeError:
        return False
    return alike(plain, again)


def _fresh(student: Callable, args: tuple, kwargs: dict) -> Any:
    try:
        return student.fresh(args, kwargs)
    except StudentCodeError:
        return None


def _varies(student: Callable, args: tuple, kwargs: dict, alone: Any) -> bool:
    """Whether the student's callee, which gave ``alone`` called alone in a fresh worker, gives
    other values on the same inputs when called again (random numbers: a dropout of p = 0.1
    leaves a small array unchanged now and then, hence several tries)."""
    return alone is not None and any(
        not same(_fresh(student, args, kwargs), alone) for _ in range(RETRIES)
    )


def _own_value(qid: str, call: CalleeCall, student: Callable, reference: Callable) -> None:
    """Raise AssertionError unless the student's callee, called alone in a fresh worker on the
    inputs the composite gave it (its contract's arguments only: what the composite passes
    beyond them is the composite's choice), returns what it returned inside the composite. A
    callee that gives other values each time it is called alone on the same inputs (random
    numbers) gave nothing usable: the case could not be checked."""
    args, kwargs, extra = contract_arguments(reference, call.args, call.kwargs)
    alone = _fresh(student, args, kwargs)
    if alone is not None and same(alone, call.value):
        return
    if _varies(student, args, kwargs, alone):
        raise CouldNotCheck(qid, call.name, RANDOM.format(where=f"the inputs {qid} gives it"))
    if extra:
        raise AssertionError(EXTRA.format(callee=call.name, qid=qid))
    raise AssertionError(STATEFUL.format(callee=call.name, qid=qid))


UNWATCHED = (
    "your {qid} gives other results on the same inputs when grading records which of your "
    "{callees} it calls than when it runs as in your own notebook (called twice on the same "
    "inputs, it returned two different results): what is graded is the plain run. {qid} must "
    "compute the same however it is called and however it reaches {callees}: it may not look at "
    "who called it, or at whether a function is still the one your file defined, and it must "
    "depend on its inputs alone (no random numbers, nothing kept between calls)."
)


def unwatched(qid: str, names: tuple[str, ...]) -> str:
    """What a composite whose watched and plain calls differ is told."""
    return UNWATCHED.format(qid=qid, callees=" and ".join(names) or "functions")


def compensated(qid: str, wrong: list[str]) -> str:
    """What a composite right only because its wrong callees cancel its own mistake is told."""
    who = " and ".join(f"your {n}" for n in wrong)
    return COMPENSATED.format(
        qid=qid, who=who, verb="is" if len(wrong) == 1 else "are", callees=" and ".join(wrong)
    )


UNCHARGED = (
    "your {qid} is right given right {callees} here, but your {who} {verb} wrong only on the "
    "inputs your {qid} gives {them}: {it} {passes} every case of {its} own, so carried forward "
    "the mistake would be charged nowhere. It is charged here, where it shows: check what {qid} "
    "passes to {callees}, and what {callees} {does} with such inputs."
)


def uncharged(qid: str, callees: list[str]) -> str:
    """What a case carried to callees that lose nothing of their own is told."""
    one = len(callees) == 1
    return UNCHARGED.format(
        qid=qid,
        callees=" and ".join(callees),
        who=" and ".join(callees),
        verb="goes" if one else "go",
        them="it" if one else "them",
        it="it" if one else "they",
        passes="passes" if one else "pass",
        its="its" if one else "their",
        does="does" if one else "do",
    )


def charge_uncharged(results: list[TestResult], order: tuple[str, ...]) -> None:
    """Charge, where it shows, every case carried forward to a callee that loses nothing of its
    own: a callee every one of whose cases passed with nothing carried. ``results`` are one
    submission's code results, ``order`` the questions callees first (contract order); a case
    charged here makes its question one that loses something, for the composites after it."""
    charged: dict[str, bool] = {}
    for qid in order:
        own = [r for r in results if r.question == qid]
        for r in own:
            carried = [t.removeprefix(Tag.CARRIED) for t in r.tags if t.startswith(Tag.CARRIED)]
            free = [c for c in dict.fromkeys(carried) if not charged.get(c, True)]
            if r.passed and free:
                r.score = 0.0
                r.tags = [t for t in r.tags if not t.startswith(Tag.CARRIED)]
                r.output = uncharged(qid, free)
        charged[qid] = bool(own) and any(
            not r.passed or any(t.startswith(Tag.CARRIED) for t in r.tags) for r in own
        )
