"""Error carried forward (docs/contract.md §7): one bug is charged once.

A composite question calls other contract functions, its *callees* (``questions.CALLEES``):
attention calls softmax; multi_head_attention calls split_heads, attention and merge_heads;
cross_check calls weights_from_torch and multi_head_attention. A composite's hidden case first
compares the student's result with the reference's. Where that fails, and the policy
(points.toml's ``[policy] carry_forward``) says so, the case asks the examiners' question: is
the result right *given what the student's own callees return*? The reference composition is
run here, in the trusted process, with the student's callees (proxies into the sandbox) in
place of the reference ones, on the same inputs: the reference itself never enters the sandbox.

- Right given a callee that returned wrong values: the case keeps its points, and its output
  names the callee whose mistake was not charged twice (``Carried``).
- A callee that raised, hung, crashed, returned something of another form than its contract's,
  or a constant where the reference's result varies: the case could not be checked and earns
  nothing (``CouldNotCheck``: "your softmax raises; fix softmax first"). Points are earned: a
  submission that raises everywhere, or whose functions return constants, gets nothing.
- Callees that return what the reference's return: the mistake is the composite's own; the
  case fails with its first message.

Every check takes the hidden case's ``Case`` (``context.Case``): the policy it is graded under,
and where what it carried forward is noted for the runner (``hidden``).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import NotAttempted, StudentCodeError, StudentRaised
from ..sandbox.worker import wire
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


class _Failed(Exception):
    def __init__(self, callee: str, what: str):
        self.callee, self.what = callee, what


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


class Callee:
    """A student callee inside a reference composition: each call goes to the student's
    function (memoised within the case) and is compared with the reference callee's result on
    the same input, here."""

    def __init__(self, qid: str, name: str, student: Callable, reference: Callable, memo: dict):
        self.qid, self.name, self.student, self.reference = qid, name, student, reference
        self.memo = memo
        self.differs = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        want = self.reference(*args, **kwargs)
        key = _key(self.name, args, kwargs)
        if key is None or key not in self.memo:
            try:
                got: Any = self.student(*args, **kwargs)
            except StudentCodeError as e:
                got = e
            if key is not None:
                self.memo[key] = got
        else:
            got = self.memo[key]
        if isinstance(got, StudentCodeError):
            raise _Failed(self.name, failure_words(got, self.qid))
        where = f"on the inputs {self.qid} gives it"
        if not _form(got, want):
            raise _Failed(
                self.name, f"returns something of another form than its contract's {where}"
            )
        degenerate = _degenerate(got, want)
        if degenerate:
            raise _Failed(self.name, f"{degenerate} {where}")
        if not _close(got, want):
            self.differs = True
        return got


def _key(name: str, args: tuple, kwargs: dict) -> tuple | None:
    """A callee call's memo key: its name and a hash of its arguments as the wire sends them."""
    try:
        return (name, hashlib.sha1(wire.encode((args, kwargs))).digest())
    except wire.WireError:
        return None


Composition = Callable[[Mapping[str, Callable]], Any]


def _prefetch(
    compose: Composition, callees: Mapping[str, tuple[Callable, Callable]], memo: dict
) -> None:
    """Fetch in one exchange the calls a composition makes first to one callee (multi-head
    attention's three split_heads): their arguments do not depend on any student result, so a
    dry run with the reference callees gives them. Only fewer round trips to the worker; what
    the composition then asks is answered from ``memo`` or called as before."""
    log: list[tuple[str, tuple, dict]] = []

    def recorder(name: str, reference: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            log.append((name, args, kwargs))
            return reference(*args, **kwargs)

        return call

    try:
        compose({n: recorder(n, r) for n, (_, r) in callees.items()})
    except Exception:  # the reference composition on these inputs: nothing to learn
        return
    lead = list(itertools.takewhile(lambda c: c[0] == log[0][0], log)) if log else []
    student = callees[lead[0][0]][0] if lead else None
    many = getattr(student, "many", None)
    if len(lead) < 2 or many is None:
        return
    todo = {}
    for name, args, kwargs in lead:
        key = _key(name, args, kwargs)
        if key is None:
            return
        if key not in memo:
            todo[key] = (args, kwargs)
    if len(todo) < 2:
        return
    try:
        results = many(list(todo.values()))
    except StudentCodeError:  # the worker failed the whole exchange: call one by one, as before
        return
    memo.update(zip(todo, results, strict=True))


def check(
    case: Case,
    qid: str,
    call: Callable[[], Any],
    verify: Callable[[Any, Any], None],
    expected: Any,
    compositions: Sequence[Composition],
    callees: Mapping[str, tuple[Callable, Callable]],
) -> None:
    """One composite check of the hidden case ``case``: ``call()`` runs the student's composite,
    ``verify(result, want)`` raises AssertionError unless ``result`` is ``want``; ``expected``
    is the reference's result; each composition computes the expected result from the callees
    it is given (``{name: callable}``), the reference composition first and other ways a
    student may call them after (e.g. softmax relying on its default axis); ``callees`` maps
    a name to (the student's proxy, the reference function)."""
    try:
        result = call()
    except NotAttempted:
        raise  # not written yet: that is all there is to say
    except StudentCodeError:
        if case.carry_forward:
            _callees_fail(qid, compositions, callees)
        raise
    try:
        verify(result, expected)
    except AssertionError:
        if not case.carry_forward:
            raise
        carried = _carried(qid, result, verify, compositions, callees)
        if carried is None:
            raise
        case.carry(carried)


def _runs(
    qid: str,
    compositions: Sequence[Composition],
    callees: Mapping[str, tuple[Callable, Callable]],
) -> Iterator[tuple[Any, dict[str, Callee]] | _Failed]:
    """Each composition with every callee the student's, then with the wrong ones only in
    some combinations (a student may call some callees and write others inline)."""
    memo: dict = {}
    if compositions:
        _prefetch(compositions[0], callees, memo)
    for compose in compositions:
        recorded = {n: Callee(qid, n, s, r, memo) for n, (s, r) in callees.items()}
        try:
            value = compose(recorded)
        except _Failed as f:
            yield f
            continue
        yield value, recorded
        wrong = [n for n, c in recorded.items() if c.differs]
        for k in range(len(wrong) - 1, 0, -1):
            for keep in itertools.combinations(wrong, k):
                mixed = {
                    n: Callee(qid, n, s, r, memo) if n in keep else r
                    for n, (s, r) in callees.items()
                }
                try:
                    yield compose(mixed), {n: mixed[n] for n in keep}
                except _Failed as f:
                    yield f


def _carried(
    qid: str,
    result: Any,
    verify: Callable[[Any, Any], None],
    compositions: Sequence[Composition],
    callees: Mapping[str, tuple[Callable, Callable]],
) -> Carried | None:
    failed: _Failed | None = None
    for run in _runs(qid, compositions, callees):
        if isinstance(run, _Failed):
            failed = failed or run
            continue
        value, recorded = run
        wrong = tuple(n for n, c in recorded.items() if isinstance(c, Callee) and c.differs)
        if not wrong:
            continue  # this composition is the reference's: nothing to carry
        try:
            verify(result, value)
        except AssertionError:
            continue
        return Carried(qid, wrong)
    if failed is not None:
        raise CouldNotCheck(qid, failed.callee, failed.what)
    return None


def _callees_fail(
    qid: str,
    compositions: Sequence[Composition],
    callees: Mapping[str, tuple[Callable, Callable]],
) -> None:
    """The composite raised: when a callee fails on the inputs the reference composition
    gives it, the case could not be checked (raises CouldNotCheck); else it is the
    composite's own failure (returns)."""
    for run in _runs(qid, compositions[:1], callees):
        if isinstance(run, _Failed):
            raise CouldNotCheck(qid, run.callee, run.what)
        return
