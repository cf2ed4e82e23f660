"""One submission's diagnosis: the calls into its code, shared between questions.

The engine creates a ``DiagnosisSession`` per submission and passes it to every question's
diagnosis (``questions/<qid>.py``): the student's results on the probes are fetched once (all
probes of a function in one exchange with the worker) and shared, each question is diagnosed at
most once (a composite asks for its callees' diagnoses), calls stop once they have used the time
budget, and the helpers below put blame where the bug is. What is computed from the reference
and its mutants alone is cached for the whole process (``trusted``): a batch grades many
submissions on the same probes.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mha_check.questions import CALLEES

from .. import errors
from ..calls import KEPT_BETWEEN_CALLS, CalleeCall, answering, contract_arguments
from ..sandbox.worker import wire
from . import probes as pr
from .catalogue import CATALOGUE
from .compare import Outcome, run, same
from .explain import error_text, on_probe
from .questions import MODULES
from .result import Diagnosis, catalogue_text, named


def raised_value_error(e: BaseException | None) -> bool:
    """A ValueError (or a subclass of it), raised by the student's code or by NumPy in it."""
    if isinstance(e, errors.StudentRaised):
        return e.is_a(ValueError)
    return isinstance(e, ValueError)


def _identical(a, b) -> bool:
    """The same result: the same values (``same``), or the same plain data (nan included)."""
    if same(a, b):
        return True
    try:
        return wire.encode(a) == wire.encode(b)
    except wire.WireError:
        return False


# The work a callee does for its composite, and what a catalogue message calls that work when
# a composite does it in its own code (``inline_text``).
JOBS = {
    "split_heads": "the split into heads",
    "merge_heads": "the merge of the heads",
    "attention": "the attention of every head",
    "multi_head_attention": "the multi-head attention",
}
NOUNS = {
    "softmax": "softmax",
    "split_heads": "split into heads",
    "merge_heads": "merge of the heads",
    "attention": "attention",
    "multi_head_attention": "multi-head attention",
}


def inline_text(ids: tuple[str, ...]) -> str:
    """The catalogue's messages said of work done inline: "Your split_heads ..." becomes "Its
    split into heads ..." (the student's function of that name was never called)."""
    texts = []
    for i in ids:
        m = CATALOGUE[i]
        text = m.message
        mine = f"Your {m.where}"
        if text.startswith(mine):
            text = f"Its {NOUNS.get(m.where, m.where)}" + text[len(mine) :]
        texts.append(text)
    return " ".join(texts)


# A function that changed an array it was given in place (its proxy saw it): the id it gets.
MODIFIES = {
    "softmax": "softmax-modifies-input",
    "split_heads": "split-modifies-input",
    "attention": "attention-modifies-input",
    "multi_head_attention": "mha-modifies-input",
}

# The wrong calls of one callee kept to check whether its own mistake showed on them.
MAX_WRONG_CALLS = 8


def _references() -> dict[str, Callable]:
    """The reference of each function a callee may call itself (all in multihead.py)."""
    from solutions import multihead as ref

    return {
        "softmax": ref.softmax,
        "split_heads": ref.split_heads,
        "merge_heads": ref.merge_heads,
        "attention": ref.attention,
    }


class GiveUp(BaseException):
    """A call into the student's code timed out or crashed, or the budget is spent: stop
    calling it (a BaseException, so that ``run`` does not record it as an ordinary outcome)."""


@dataclass(frozen=True)
class CallsMade:
    """What a composite did with its callees on the probes, as the worker recorded it."""

    called: tuple[str, ...]  # the callees it called on some probe
    wrong: tuple[str, ...]  # of those, the ones that returned a wrong value (or failed) there
    given: list[Outcome]  # its results with its calls of ``answered`` answered by the reference
    answered: tuple[str, ...] = ()


class DiagnosisSession:
    """Diagnoses for one submission; calls into its code are shared between questions.

    Calls count against the submission's time, so diagnosis stops (every later question gets
    None) once its calls took ``budget`` seconds, or when one of them times out or kills the
    worker.
    """

    def __init__(self, env: Mapping[str, Callable], budget: float = 5.0):
        self.env = env
        self.budget = budget  # seconds of calls into the student's code, for all questions
        self.spent = 0.0
        self.gave_up = False
        self.memo: dict[str, Diagnosis | None] = {}
        # a question's diagnosis without its missing ValueError, where that differs (_refusal)
        self.value_memo: dict[str, Diagnosis | None] = {}
        self.calls: dict[tuple, Outcome] = {}
        self.wrapped: dict[str, Callable] = {}
        # per callee, its first call that went wrong inside a composite (a value, not a raise)
        self.wrong_inside: dict[str, tuple[CalleeCall, Callable]] = {}
        # per callee, every call that went wrong inside a composite (a value, not a raise)
        self.wrong_calls: dict[str, list[tuple[CalleeCall, Callable]]] = {}

    # -- entry points ----------------------------------------------------------------------

    def diagnose(self, qid: str) -> Diagnosis | None:
        """The diagnosis of ``qid`` (None: right on our probes, not attempted, or gave up)."""
        if self.gave_up:
            return None
        try:
            return self.find(qid)
        except GiveUp:
            self.gave_up = True
            return None

    def find(self, qid: str) -> Diagnosis | None:
        """``diagnose`` for use inside a diagnosis: a GiveUp goes through to the caller."""
        if qid not in self.memo:
            module = MODULES.get(qid)
            found = module.diagnose(self) if module is not None else None
            self.memo[qid] = self._modified(qid, found)
        return self.memo[qid]

    def _modified(self, qid: str, found: Diagnosis | None) -> Diagnosis | None:
        """``found``, with ``qid``'s in-place change of its inputs named (``MODIFIES``) when a
        call of it so far changed an array it was given: what the proxy saw (the worker
        compares every array argument before and after the call), never what the code says.
        Its callers' results do not depend on it (``values`` leaves it out)."""
        mid = MODIFIES.get(qid)
        func = self.env.get(qid)
        if mid is None or not getattr(func, "inputs_modified", False):
            return found
        self.value_memo.setdefault(qid, found)
        if found is None:
            return self.in_function(qid, (mid,), inline=False)
        text = CATALOGUE[mid].message
        if found.blame == qid:
            return named((*found.misconceptions, mid), qid, f"{found.message} {text}", qid)
        return named((mid, *found.misconceptions), qid, f"{text} Besides: {found.message}", qid)

    def values(self, qid: str) -> Diagnosis | None:
        """What is wrong with ``qid``'s results, leaving out a missing ValueError of its own:
        what its callers' results depend on (and so what they may blame it for)."""
        found = self.find(qid)
        return self.value_memo.get(qid, found)

    def wrong(self, qid: str) -> bool:
        """``qid`` gives wrong results (a missing ValueError alone does not count)."""
        return self.values(qid) is not None

    # -- calls into the student's code -------------------------------------------------------

    def _key(self, name: str, args: tuple, kwargs: dict) -> tuple | None:
        try:
            return (name, hashlib.sha1(wire.encode((args, kwargs))).digest())
        except wire.WireError:
            return None

    def _spend(self, start: float) -> None:
        self.spent += time.monotonic() - start

    def _checked(self, outcome: Outcome) -> Outcome:
        if isinstance(outcome.error, errors.CallTimeout | errors.WorkerCrashed):
            raise GiveUp from None
        return outcome

    def _missing(self, name: str) -> Callable:
        def missing(*args, **kwargs):
            raise errors.MissingFunction(f"{name} is missing")

        return missing

    def fn(self, name: str) -> Callable:
        """The student's function, memoised: candidates call it often with the same inputs."""
        if name in self.wrapped:
            return self.wrapped[name]
        func = self.env.get(name) or self._missing(name)

        def call(*args, **kwargs):
            key = self._key(name, args, kwargs)
            if key is None:
                return func(*args, **kwargs)
            if key not in self.calls:
                if self.spent > self.budget:
                    raise GiveUp  # slow code: the hidden tests need the time more
                start = time.monotonic()
                self.calls[key] = run(lambda: func(*args, **kwargs), [pr.Probe(())])[0]
                self._spend(start)
            outcome = self._checked(self.calls[key])
            if not outcome.ok:
                raise outcome.error
            return outcome.value

        self.wrapped[name] = call
        return call

    def student(self, name: str, probes: Sequence[pr.Probe]) -> list[Outcome]:
        """The student's ``name`` on every probe, fetched in one exchange where it can be."""
        keys = [self._key(name, p.args, p.kwargs) for p in probes]
        todo = [i for i, k in enumerate(keys) if k is None or k not in self.calls]
        func = self.env.get(name)
        many = getattr(func, "many", None)
        if todo and many is not None and all(keys[i] is not None for i in todo):
            if self.spent > self.budget:
                raise GiveUp
            start = time.monotonic()
            try:
                found = many([(probes[i].args, probes[i].kwargs) for i in todo])
            except errors.StudentCodeError as e:  # a hang or crash of the whole exchange
                found = [e] * len(todo)
            self._spend(start)
            for i, value in zip(todo, found, strict=True):
                error = value if isinstance(value, errors.StudentCodeError) else None
                self.calls[keys[i]] = Outcome(error=error) if error else Outcome(value=value)
        return [self._checked(o) for o in run(self.fn(name), probes)]

    def unsteady(self, name: str, probes: Sequence[pr.Probe]) -> bool:
        """Whether the student's ``name`` gives another result when called again on the same
        inputs (random numbers: a dropout left in), tried twice more on each of the first three
        probes it answers. What it gives is its behaviour, not a claim: a function of its
        inputs alone never differs."""
        func = self.env.get(name)
        if func is None:
            return False
        tried = 0
        for probe, first in zip(probes, self.student(name, probes), strict=True):
            if not first.ok or tried == 3:
                continue
            tried += 1
            for _ in range(2):
                if self.spent > self.budget:
                    raise GiveUp
                start = time.monotonic()
                again = run(lambda p=probe: func(*p.args, **p.kwargs), [pr.Probe(())])[0]
                self._spend(start)
                again = self._checked(again)
                if again.ok and not _identical(again.value, first.value):
                    return True
        return False

    def raises_value_error(self, name: str, probes: Sequence[pr.Probe]) -> bool | None:
        """Whether the student's ``name`` raises ValueError (or a subclass) on every probe;
        None when that cannot be told (the budget is spent, or a call hung or crashed)."""
        if self.spent > self.budget:
            return None
        try:
            found = self.student(name, probes)
        except GiveUp:
            self.gave_up = True
            return None
        return all(raised_value_error(o.error) for o in found)

    def calls_made(
        self,
        qid: str,
        probes: Sequence[pr.Probe],
        references: Mapping[str, Callable],
        answerable: tuple[str, ...] | None = None,
        answers: Mapping[str, Callable] | None = None,
    ) -> CallsMade:
        """Which of its callees (``references``: name -> the reference) ``qid`` really calls on
        the probes, which of those calls went wrong, and its results with its calls of the
        ``answerable`` callees (all, by default) answered by the reference. A blame on a callee
        rests on this, never on a composition of our own: a function that never calls its
        callee is judged alone. A callee called on inputs the reference does not take (an
        extra mask argument, a module) is not answered: its own results stand. ``answers``:
        other functions to answer the calls with (the calls are still judged against
        ``references``)."""
        func = self.env.get(qid)
        names = tuple(references)
        if getattr(func, "observe", None) is None:  # no record can be had: judged alone
            return CallsMade((), (), self.student(qid, probes))
        called: dict[str, None] = {}
        wrong: dict[str, None] = {}
        foreign: set[str] = set()  # called on inputs the reference does not take
        for p in probes:
            if self.spent > self.budget:
                raise GiveUp
            start = time.monotonic()
            observed = func.observe(p.args, p.kwargs, names)
            self._spend(start)
            self._checked(Outcome(error=observed.value) if observed.failed else Outcome())
            for c in observed.calls:
                called[c.name] = None
                went_wrong, unanswerable = self._judged(c, references[c.name])
                if went_wrong:
                    wrong[c.name] = None
                    if c.known and c.error is None:
                        self.wrong_inside.setdefault(c.name, (c, references[c.name]))
                        kept = self.wrong_calls.setdefault(c.name, [])
                        if len(kept) < MAX_WRONG_CALLS:
                            kept.append((c, references[c.name]))
                if unanswerable:
                    foreign.add(c.name)
        allowed = answerable if answerable is not None else names
        answered = tuple(n for n in allowed if n in called and n not in foreign)
        if not answered:
            return CallsMade(tuple(called), tuple(wrong), self.student(qid, probes))
        answer = answering({n: (answers or references)[n] for n in answered})
        given: list[Outcome] = []
        for p in probes:
            if self.spent > self.budget:
                raise GiveUp
            start = time.monotonic()
            given += run(lambda *a, **k: func.with_callees(a, k, answer, answered), [p])
            self._spend(start)
            self._checked(given[-1])
        return CallsMade(tuple(called), tuple(wrong), given, answered)

    def _judged(self, call: CalleeCall, reference: Callable) -> tuple[bool, bool]:
        """A recorded callee call: (it went wrong, the reference cannot answer it). Wrong: it
        failed or returned other than the reference on the same inputs. Inputs that are not
        plain data are judged by the callee's own results on our probes; inputs the reference
        does not take are the caller's choice, and not the callee's fault. Arguments beyond
        the contract's (a ``mask=None``) are left out for the reference; where they change what
        the callee gives (it gives another result on the contract's arguments alone), the
        call is the caller's choice too."""
        if not call.known:
            return self.wrong(call.name), True
        args, kwargs, extra = contract_arguments(reference, call.args, call.kwargs)
        try:
            want = reference(*args, **kwargs)
        except Exception:
            return False, True
        if call.error is not None:
            return True, False
        if extra:
            alone = run(lambda: self.fn(call.name)(*args, **kwargs), [pr.Probe(())])[0]
            if not (alone.ok and same(alone.value, call.value)):
                return False, True
        return not same(call.value, want), False

    @staticmethod
    def not_attempted(outcomes: list[Outcome]) -> bool:
        return all(isinstance(o.error, errors.NotAttempted) for o in outcomes)

    # -- blame -----------------------------------------------------------------------------

    def _callee(self, qid: str, name: str) -> Diagnosis:
        """What is wrong with callee ``name``: its own diagnosis, or (right on our probes, wrong
        on the inputs ``qid`` gave it) that much. Its own mistake is said only where it showed
        on those inputs: a callee right there given right callees of its own went wrong through
        them (raschka's attention, right on the 2-D slices it is given but through a softmax
        that overflows), and they are what is said."""
        found = self.values(name)
        if found is not None:
            if found.blame == name:
                deeper = self._through_its_callees(qid, name)
                if deeper:
                    return self.blame_callees(name, deeper)
            return found
        if self._right_alone(name):
            text = (
                f"it returned other values than a right {name} on the inputs your {qid} gave it "
                f"while your {qid} was running, yet on those same inputs alone it is right: "
                + KEPT_BETWEEN_CALLS
            )
            return named((), name, text, name)
        text = (
            f"it returned other values than a right {name} on the inputs your {qid} gave it, "
            f"though it is right on ours: check it on such inputs."
        )
        return named((), name, text, name)

    def _through_its_callees(self, qid: str, name: str) -> tuple[str, ...]:
        """Where every call of ``name`` that went wrong inside ``qid`` is right with its own
        callees answered by the reference, the callees of its that went wrong in those calls
        (empty: its own mistake showed there, or that cannot be told)."""
        calls = self.wrong_calls.get(name, [])
        func = self.env.get(name)
        own = CALLEES.get(name, ())
        if not calls or not own or getattr(func, "observe", None) is None:
            return ()
        references = _references()
        answer = answering({n: references[n] for n in own})
        deeper: dict[str, None] = {}
        for call, reference in calls:
            args, kwargs, _ = contract_arguments(reference, call.args, call.kwargs)
            try:
                want = reference(*args, **kwargs)
            except Exception:
                return ()
            if self.spent > self.budget:
                raise GiveUp
            start = time.monotonic()
            given = run(
                lambda a=args, k=kwargs: func.with_callees(a, k, answer, own), [pr.Probe(())]
            )[0]
            observed = func.observe(args, kwargs, own)
            self._spend(start)
            if not (self._checked(given).ok and same(given.value, want)):
                return ()  # its own mistake shows on what it was given
            for c in observed.calls:
                went_wrong, _ = self._judged(c, references[c.name])
                if went_wrong:
                    deeper[c.name] = None
                    if c.known and c.error is None:
                        self.wrong_inside.setdefault(c.name, (c, references[c.name]))
                        self.wrong_calls.setdefault(c.name, []).append((c, references[c.name]))
        return tuple(deeper)

    def _right_alone(self, name: str) -> bool:
        """Whether the student's ``name``, called alone on the inputs on which it went wrong
        inside a composite, is right there (what it computes then depends on state)."""
        found = self.wrong_inside.get(name)
        if found is None:
            return False
        call, reference = found
        args, kwargs, _ = contract_arguments(reference, call.args, call.kwargs)
        try:
            want = reference(*args, **kwargs)
        except Exception:
            return False
        alone = run(lambda: self.fn(name)(*args, **kwargs), [pr.Probe(())])[0]
        return alone.ok and same(alone.value, want)

    def blame_callees(self, qid: str, names: tuple[str, ...]) -> Diagnosis:
        """``qid`` is right given right callees; ``names`` are the callees it called that went
        wrong there: blame the deepest."""
        diags = [self._callee(qid, n) for n in names]
        ids = tuple(dict.fromkeys(i for d in diags for i in d.misconceptions))
        roots = tuple(dict.fromkeys(r for d in diags for r in d.roots))
        at_fault = list(dict.fromkeys(fn for fn, _ in roots))
        who = " and ".join(f"your {fn}" for fn in at_fault)
        via = [n for n in names if n not in at_fault]
        through = f" (which it calls through your {' and '.join(via)})" if via else ""
        verb = "is" if len(at_fault) == 1 else "are"
        if all(self.values(fn) is None and self._right_alone(fn) for fn in at_fault):
            # each right on our probes and alone on its inputs there: state, not its mistake
            text = (
                f"Your {qid} is right given right results of the functions it calls, but "
                f"{who}{through} {verb} not right while your {qid} runs."
            )
        else:
            text = (
                f"Your {qid} is right given the functions it calls: it goes wrong only because "
                f"{who}{through} {verb} wrong."
            )
        text += "".join(f" About {fn}: {detail}" for fn, detail in roots)
        return named(ids, at_fault[0], text, qid, roots)

    def compensated(self, qid: str, ids: tuple[str, ...], wrong: Sequence[str]) -> Diagnosis:
        """Right on our inputs only because wrong callees cancel an own mistake: both named,
        blame on ``qid`` (fixing the callees alone would break it)."""
        extra = tuple(i for n in wrong for i in self._callee(qid, n).misconceptions)
        who = " and ".join(f"your {n}" for n in wrong)
        text = (
            f"Your {qid} gives right results only because {who} "
            f"{'is' if len(wrong) == 1 else 'are'} wrong in a way that cancels a mistake of its "
            f"own: given a right {' and '.join(wrong)}, it makes this mistake. "
            + catalogue_text(ids, qid)
        )
        return named((*ids, *extra), qid, text, qid)

    def callees_note(self, qid: str) -> str:
        names = CALLEES.get(qid, ())
        if names and not any(self.wrong(n) for n in names):
            listed = ", ".join(names)
            return f" (Your {listed} {'is' if len(names) == 1 else 'are'} right on our probes.)"
        return ""

    def in_function(
        self,
        qid: str,
        ids: tuple[str, ...],
        inline: bool,
        called: Sequence[str] | None = None,
        callee: str | tuple[str, ...] | None = None,
    ) -> Diagnosis:
        """A catalogued mistake in ``qid``'s own code; ``inline``: a callee's mistake made
        there. With the record of its calls (``called``), the words follow what happened: a
        composite that never called the callee (``callee``, one or several, by default where
        the mistake lives) does that callee's work itself, and only that is said."""
        text = catalogue_text(ids, qid)
        if inline:
            where = CATALOGUE[ids[0]].where
            callees = (callee,) if isinstance(callee, str) else tuple(callee or (where,))
            if called is not None and not set(callees) & set(called):
                jobs = " and ".join(JOBS.get(c, c) for c in callees)
                yours = " or ".join(f"your {c}" for c in callees)
                kinds = " and a ".join(dict.fromkeys(CATALOGUE[i].where for i in ids))
                what = "a mistake" if len(ids) == 1 else "mistakes"
                text = (
                    f"Your {qid} does {jobs} in its own code (it never calls {yours}), and "
                    f"makes there {what} that a {kinds} can make: " + inline_text(ids)
                )
            else:
                right = f"Your {where} is right, but " if not self.wrong(where) else ""
                text = (
                    f"{right}{qid} makes this mistake itself (in its own code, or in how it "
                    f"calls {where}): {text}"
                )
        return named(ids, qid, text + self.callees_note(qid), qid)

    def with_callees(self, qid: str, ids: tuple[str, ...], wrong: Sequence[str]) -> Diagnosis:
        """An own catalogued mistake on top of wrong callees: both named, blame on ``qid``."""
        extra = tuple(i for n in wrong for i in self._callee(qid, n).misconceptions)
        text = catalogue_text(ids, qid) + "".join(
            f" Also, about your {n}: {self._callee(qid, n).message}" for n in wrong
        )
        return named((*ids, *extra), qid, text, qid)

    def plain(self, qid: str, text: str) -> Diagnosis:
        return named((), qid, text + self.callees_note(qid), qid)

    def raised(
        self, qid: str, student: list[Outcome], probes, called: Sequence[str] = ()
    ) -> Diagnosis | None:
        """Every probe raised: say where, blaming a callee it ``called`` that raises too."""
        if self.not_attempted(student):
            return None
        for name in called:
            d = self.values(name)
            if d is not None and d.misconception is None and "raised" in d.message:
                return named(
                    d.misconceptions,
                    name,
                    f"Your {qid} fails because {name}, which it calls, fails: {d.message}",
                    qid,
                )
        i = next(i for i, o in enumerate(student) if not o.ok)
        return self.plain(
            qid,
            f"Your {qid} gave no usable result on any input we tried; "
            f"{on_probe(probes[i])}: {error_text(student[i].error)}.",
        )
