"""diagnose(): name the mistake behind a wrong answer, and the function it lives in.

The student's function runs on the grader's own probes (probes.py) and its results are compared
with the reference and with every catalogued mistake (mutants.py), alone and combined with the
student's own callees. The first candidate that reproduces every result explains it; a callee's
fault is found by diagnosing that callee on its own probes.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from solutions import crosscheck as ref_cc
from solutions import multihead as ref

from .. import errors
from ..worker import wire
from . import mutants as mut
from . import probes as pr
from .catalogue import CATALOGUE
from .compare import Outcome, as_array, matches, run, same, same_array
from .explain import array_diff, error_text, first_difference, sums_text

CALLEES: dict[str, tuple[str, ...]] = {
    "attention": ("softmax",),
    "multi_head_attention": ("split_heads", "attention", "merge_heads"),
    "cross_check": ("weights_from_torch", "multi_head_attention"),
}


@dataclass(frozen=True)
class Diagnosis:
    """Why a code question lost points. ``message`` is for the student."""

    misconception: str | None  # the main catalogue id, None outside the catalogue
    message: str
    blame: str | None  # the contract function the bug is in (None: could not tell)
    misconceptions: tuple[str, ...] = ()  # every id found, main one first
    question: str = ""
    # (function at fault, what is wrong there): several when more than one callee is wrong
    roots: tuple[tuple[str, str], ...] = ()

    @property
    def tags(self) -> list[str]:
        return [f"misconception:{m}" for m in self.misconceptions]


def diagnose(qid: str, env: Mapping[str, Callable]) -> Diagnosis | None:
    """Diagnose question ``qid`` given the student's functions (proxy semantics).

    Returns None when the function agrees with the reference on every probe, is not attempted,
    or hangs or crashes (the failing hidden test's own message then says all there is to say).
    """
    return Diagnoser(env).diagnose(qid)


def diagnose_all(qids: Iterable[str], env: Mapping[str, Callable]) -> dict[str, Diagnosis | None]:
    """Diagnose several questions of one submission, sharing the calls into its code."""
    diagnoser = Diagnoser(env)
    return {q: diagnoser.diagnose(q) for q in qids}


class _GiveUp(BaseException):
    """A call into the student's code timed out or crashed: stop calling it (a BaseException,
    so that ``run`` does not record it as an ordinary outcome)."""


class Diagnoser:
    """Diagnoses for one submission; calls into its code are shared between questions.

    Calls count against the submission's time, so diagnosis stops (returns None) once its
    calls took ``budget`` seconds, or when one of them times out or kills the worker.
    """

    def __init__(self, env: Mapping[str, Callable], budget: float = 5.0):
        self._session = _Session(env, budget)
        self._gave_up = False

    def diagnose(self, qid: str) -> Diagnosis | None:
        if self._gave_up:
            return None
        try:
            return self._session.diagnose(qid)
        except _GiveUp:
            self._gave_up = True
            return None


def _named(
    ids: tuple[str, ...], blame: str | None, message: str, qid: str, roots=None
) -> Diagnosis:
    roots = roots if roots is not None else ((blame, message),)
    return Diagnosis(ids[0] if ids else None, message, blame, ids, qid, roots)


def _catalogue_text(ids: tuple[str, ...]) -> str:
    return " ".join(CATALOGUE[i].message for i in ids)


class _Session:
    """One diagnosis: caches the student's results and the callees' diagnoses."""

    def __init__(self, env: Mapping[str, Callable], budget: float = 5.0):
        self.env = env
        self.memo: dict[str, Diagnosis | None] = {}
        self.calls: dict[tuple, Outcome] = {}
        self.wrapped: dict[str, Callable] = {}
        self.budget = budget  # seconds of calls into the student's code, for all questions
        self.spent = 0.0

    def fn(self, name: str) -> Callable:
        """The student's function, memoised: candidates call it often with the same inputs."""
        if name in self.wrapped:
            return self.wrapped[name]

        def missing(*args, **kwargs):
            raise errors.MissingFunction(f"{name} is missing")

        func = self.env.get(name, missing)

        def call(*args, **kwargs):
            try:
                key = (name, hashlib.sha1(wire.encode((args, kwargs))).digest())
            except wire.WireError:
                return func(*args, **kwargs)
            if key not in self.calls:
                if self.spent > self.budget:
                    raise _GiveUp  # slow code: the hidden tests need the time more
                start = time.monotonic()
                self.calls[key] = run(lambda: func(*args, **kwargs), [pr.Probe(())])[0]
                self.spent += time.monotonic() - start
            outcome = self.calls[key]
            if isinstance(outcome.error, errors.CallTimeout | errors.WorkerCrashed):
                raise _GiveUp from None
            if not outcome.ok:
                raise outcome.error
            return outcome.value

        self.wrapped[name] = call
        return call

    def diagnose(self, qid: str) -> Diagnosis | None:
        if qid not in self.memo:
            method = getattr(self, "_" + qid, None)
            self.memo[qid] = method() if method else None
        return self.memo[qid]

    def wrong(self, qid: str) -> bool:
        return self.diagnose(qid) is not None

    def not_attempted(self, outcomes: list[Outcome]) -> bool:
        return all(isinstance(o.error, errors.NotAttempted) for o in outcomes)

    # --- callee blame -------------------------------------------------------------------

    def blame_callees(self, qid: str, names: tuple[str, ...]) -> Diagnosis:
        """``qid`` is right given its callees ``names``, which are wrong: blame the deepest."""
        diags = [self.diagnose(n) for n in names]
        ids = tuple(dict.fromkeys(i for d in diags for i in d.misconceptions))
        roots = tuple(dict.fromkeys(r for d in diags for r in d.roots))
        at_fault = [fn for fn, _ in roots]
        who = " and ".join(f"your {fn}" for fn in at_fault)
        via = [n for n in names if n not in at_fault]
        through = f" (which it calls through your {' and '.join(via)})" if via else ""
        text = (
            f"Your {qid} is right given the functions it calls: it goes wrong only because "
            f"{who}{through} {'is' if len(at_fault) == 1 else 'are'} wrong."
        )
        text += "".join(f" About {fn}: {detail}" for fn, detail in roots)
        return _named(ids, at_fault[0], text, qid, roots)

    def callees_note(self, qid: str) -> str:
        names = CALLEES.get(qid, ())
        if names and not any(self.wrong(n) for n in names):
            listed = ", ".join(names)
            return f" (Your {listed} {'is' if len(names) == 1 else 'are'} right on our probes.)"
        return ""

    def in_function(self, qid: str, ids: tuple[str, ...], inline: bool) -> Diagnosis:
        text = _catalogue_text(ids)
        if inline:
            where = CATALOGUE[ids[0]].where
            right = f"Your {where} is right, but " if not self.wrong(where) else ""
            text = (
                f"{right}{qid} makes this mistake itself (in its own code, or in how it "
                f"calls {where}): {text}"
            )
        return _named(ids, qid, text + self.callees_note(qid), qid)

    def plain(self, qid: str, text: str) -> Diagnosis:
        return _named((), qid, text + self.callees_note(qid), qid)

    def raised(self, qid: str, student: list[Outcome], probes) -> Diagnosis | None:
        """Every probe raised: say where, blaming a callee that raises too."""
        if self.not_attempted(student):
            return None
        for name in CALLEES.get(qid, ()):
            d = self.diagnose(name)
            if d is not None and d.misconception is None and "raised" in d.message:
                return _named(
                    d.misconceptions,
                    name,
                    f"Your {qid} fails because {name}, which it calls, fails: {d.message}",
                    qid,
                )
        i = next(i for i, o in enumerate(student) if not o.ok)
        return self.plain(
            qid,
            f"Your {qid} gave no usable result on any input we tried; on inputs "
            f"{probes[i].describe()}: {error_text(student[i].error)}.",
        )

    # --- softmax ------------------------------------------------------------------------

    def _softmax(self) -> Diagnosis | None:
        probes = pr.softmax_probes()
        student = run(self.fn("softmax"), probes)
        expected = run(ref.softmax, probes)
        if matches(student, expected) or self.not_attempted(student):
            return None
        mod = [i for i, p in enumerate(probes) if not p.large]
        big = [i for i, p in enumerate(probes) if p.large]
        s_mod = [student[i] for i in mod]
        sub = [probes[i] for i in mod]

        ids: tuple[str, ...] | None = None
        behaviour: Callable | None = None
        if matches(s_mod, [expected[i] for i in mod]):
            ids, behaviour = (), ref.softmax
        concrete = [(("softmax-no-keepdims",), f) for f in mut.SOFTMAX["softmax-no-keepdims"]]
        concrete += [(i, f) for i, fs in mut.SOFTMAX_COMBINED.items() for f in fs]
        for f_ids, f in concrete:
            if ids is None and matches(s_mod, run(f, sub)):
                ids, behaviour = f_ids, f
        if ids is None and _softmax_over_other_axes(s_mod, sub):
            ids = ("softmax-wrong-axis",)
        if ids is None and _softmax_global(s_mod, sub):
            ids = ("softmax-global",)
        if ids is not None:
            unstable = False
            for i in big:
                s = student[i]
                if behaviour is not None:
                    want = run(behaviour, [probes[i]])[0]
                    unstable |= not matches([s], [want], vacuous=True) and (
                        not s.ok or not _finite(s.value) or behaviour is ref.softmax
                    )
                else:
                    unstable |= s.ok and not _finite(s.value)
            ids = ids + ("softmax-unstable",) * (unstable and "softmax-unstable" not in ids)
            if ids:
                return self.in_function("softmax", ids, inline=False)

        def describe(got, want, probe):
            diff = array_diff(got, want)
            sums = sums_text(got, probe.kwargs.get("axis", -1))
            return f"{diff}; {sums}" if sums else diff

        i, text = first_difference(student, expected, probes, describe)
        if all(not o.ok for o in student):
            return self.raised("softmax", student, probes)
        return self.plain("softmax", f"Your softmax differs from a softmax: {text}.")

    # --- split_heads / merge_heads ------------------------------------------------------

    def _split_heads(self) -> Diagnosis | None:
        return self._simple(
            "split_heads",
            pr.split_probes(),
            ref.split_heads,
            mut.SPLIT,
            ("head", "token", "feature"),
        )

    def _merge_heads(self) -> Diagnosis | None:
        return self._simple(
            "merge_heads", pr.merge_probes(), ref.merge_heads, mut.MERGE, ("token", "feature")
        )

    def _simple(self, qid, probes, reference, catalogue, names) -> Diagnosis | None:
        student = run(self.fn(qid), probes)
        expected = run(reference, probes)
        if matches(student, expected) or self.not_attempted(student):
            return None
        for mid, fs in catalogue.items():
            if any(matches(student, run(f, probes)) for f in fs):
                return self.in_function(qid, (mid,), inline=False)
        if all(not o.ok for o in student):
            return self.raised(qid, student, probes)
        _, text = first_difference(
            student, expected, probes, lambda g, w, p: array_diff(g, w, names)
        )
        return self.plain(qid, f"Your {qid} differs from the reference: {text}.")

    # --- attention ----------------------------------------------------------------------

    def _attention(self) -> Diagnosis | None:
        probes = pr.attention_probes()
        student = run(self.fn("attention"), probes)
        expected = run(mut.attention_ref, probes)
        if matches(student, expected) or self.not_attempted(student):
            return None
        own = self.fn("softmax")
        own_default = _default_axis(own)
        if self.wrong("softmax"):  # right given the student's own softmax?
            for sm in (own, own_default):
                if matches(student, run(partial(mut.attention_ref, softmax=sm), probes), True):
                    return self.blame_callees("attention", ("softmax",))
        softmaxes: list[tuple[tuple[str, ...], Callable]] = [((), ref.softmax)]
        softmaxes += [((i,), f) for i, fs in mut.SOFTMAX.items() for f in fs]
        attentions: list[tuple[tuple[str, ...], Callable]] = [((), mut.attention_ref)]
        attentions += [((i,), f) for i, fs in mut.ATTENTION.items() for f in fs]
        for a_ids, a in attentions[1:]:  # an own mistake, with the reference softmax
            if matches(student, run(a, probes)):
                return self.in_function("attention", a_ids, inline=False)
        if self.wrong("softmax"):  # an own mistake on top of the student's wrong softmax
            for (a_ids, a), sm in itertools.product(attentions[1:], (own, own_default)):
                if matches(student, run(partial(a, softmax=sm), probes)):
                    d = self.diagnose("softmax")
                    ids = a_ids + d.misconceptions
                    text = f"{_catalogue_text(a_ids)} Also, about your softmax: {d.message}"
                    return _named(ids, "attention", text, "attention")
        for (a_ids, a), (s_ids, sm) in itertools.product(attentions, softmaxes[1:]):
            if matches(student, run(partial(a, softmax=sm), probes)):  # softmax written inline
                return self.in_function("attention", a_ids + s_ids, inline=not a_ids)
        if all(not o.ok for o in student):
            return self.raised("attention", student, probes)

        def describe(got, want, probe):
            if not isinstance(got, tuple | list) or len(got) != 2:
                return "did not return a pair (out, weights)"
            parts = []
            for label, g, w in (("out", got[0], want[0]), ("weights", got[1], want[1])):
                if not same(g, w):
                    names = ("head", "query", "key" if label == "weights" else "feature")
                    parts.append(f"{label}: {array_diff(g, w, names)}")
            return "; ".join(parts)

        _, text = first_difference(student, expected, probes, describe)
        return self.plain("attention", f"Your attention differs from the reference: {text}.")

    # --- multi_head_attention -----------------------------------------------------------

    def _multi_head_attention(self) -> Diagnosis | None:
        probes = pr.mha_probes()
        student = run(self.fn("multi_head_attention"), probes)
        reference_callees = {
            "split_heads": ref.split_heads,
            "attention": mut.attention_ref,
            "merge_heads": ref.merge_heads,
        }

        def pipeline(impl=mut.mha_ref, **over):
            callees = {**reference_callees, **over}
            return partial(
                impl,
                split=callees["split_heads"],
                attention=callees["attention"],
                merge=callees["merge_heads"],
            )

        expected = run(pipeline(), probes)
        if matches(student, expected) or self.not_attempted(student):
            return None
        wrong = [n for n in CALLEES["multi_head_attention"] if self.wrong(n)]
        own = {n: self.fn(n) for n in wrong}
        for k in range(len(wrong), 0, -1):  # right given (some of) its own callees?
            for names in itertools.combinations(wrong, k):
                cand = run(pipeline(**{n: own[n] for n in names}), probes)
                if matches(student, cand, vacuous=True):
                    return self.blame_callees("multi_head_attention", names)
        for mid, fs in mut.MHA.items():
            for f in fs:
                if matches(student, run(pipeline(f), probes)):
                    return self.in_function("multi_head_attention", (mid,), inline=False)
        inline: list[tuple[str, dict]] = []
        inline += [(i, {"split_heads": f}) for i, fs in mut.SPLIT.items() for f in fs]
        inline += [(i, {"merge_heads": f}) for i, fs in mut.MERGE.items() for f in fs]
        inline += [(i, {"attention": f}) for i, fs in mut.ATTENTION.items() for f in fs]
        inline += [
            (i, {"attention": partial(mut.attention_ref, softmax=f)})
            for i, fs in mut.SOFTMAX.items()
            for f in fs
        ]
        for mid, over in inline:
            if matches(student, run(pipeline(**over), probes)):
                return self.in_function("multi_head_attention", (mid,), inline=True)
        if wrong:
            for mid, fs in mut.MHA.items():
                for f in fs:
                    if matches(student, run(pipeline(f, **own), probes)):
                        ids = (mid,) + tuple(
                            i for n in wrong for i in self.diagnose(n).misconceptions
                        )
                        text = _catalogue_text((mid,)) + "".join(
                            f" Also, about your {n}: {self.diagnose(n).message}" for n in wrong
                        )
                        return _named(ids, "multi_head_attention", text, "multi_head_attention")
        if all(not o.ok for o in student):
            return self.raised("multi_head_attention", student, probes)

        def describe(got, want, probe):
            if not isinstance(got, tuple | list) or len(got) != 2:
                return "did not return a pair (out, weights)"
            parts = []
            if not same(got[1], want[1]):
                parts.append(f"weights: {array_diff(got[1], want[1], ('head', 'query', 'key'))}")
            if not same(got[0], want[0]):
                parts.append(f"out: {array_diff(got[0], want[0], ('token', 'feature'))}")
            return "; ".join(parts)

        _, text = first_difference(student, expected, probes, describe)
        return self.plain(
            "multi_head_attention", f"Your multi_head_attention differs from the reference: {text}."
        )

    # --- weights_from_torch -------------------------------------------------------------

    def _weights_from_torch(self) -> Diagnosis | None:
        probes = pr.adapter_probes()
        student = run(self.fn("weights_from_torch"), probes)
        expected = run(ref_cc.weights_from_torch, probes)
        if matches(student, expected):
            floats = [
                as_array(w).dtype for o in student for w in o.value if as_array(w) is not None
            ]
            if any(d != np.float64 for d in floats):
                return self.plain(
                    "weights_from_torch",
                    "Your weights_from_torch returns the right numbers but not as float64 arrays "
                    f"(got {sorted({str(d) for d in floats})}); convert them to float64.",
                )
            return None
        if self.not_attempted(student):
            return None
        if all(not o.ok for o in student):
            return self.raised("weights_from_torch", student, probes)
        found: set[str] = set()
        for probe, s in zip(probes, student, strict=True):
            names = _identify_blocks(probe.args[0], s.value) if s.ok else None
            if names is None:
                found = set()
                break
            found |= {"adapter-no-transpose"} if any(t for _, t in names) else set()
            found |= {"adapter-qkv-order"} if [b for b, _ in names[:3]] != list("qkv") else set()
            if names[3][0] != "o":
                found = set()
                break
        if found:
            ids = tuple(i for i in CATALOGUE if i in found)
            return self.in_function("weights_from_torch", ids, inline=False)

        def describe(got, want, probe):
            if not isinstance(got, tuple | list) or len(got) != 4:
                return "did not return four matrices (Wq, Wk, Wv, Wo)"
            bad = [
                f"{n}: {array_diff(g, w, ('input feature', 'output feature'))}"
                for n, g, w in zip(("Wq", "Wk", "Wv", "Wo"), got, want, strict=True)
                if not same(g, w)
            ]
            return "; ".join(bad)

        _, text = first_difference(student, expected, probes, describe)
        return self.plain(
            "weights_from_torch",
            f"Your weights_from_torch does not reproduce the module's weights: {text}.",
        )

    # --- cross_check --------------------------------------------------------------------

    def _cross_check(self) -> Diagnosis | None:
        probes = pr.crosscheck_probes()
        student = run(self.fn("cross_check"), probes)
        if self.not_attempted(student):
            return None
        reference = {
            "weights_from_torch": ref_cc.weights_from_torch,
            "multi_head_attention": ref.multi_head_attention,
        }
        own = {n: self.fn(n) for n in CALLEES["cross_check"]}

        def check(over=None, **kw):
            p = {**reference, **(over or {})}
            return partial(
                mut.cross_check_with,
                weights_from_torch=p["weights_from_torch"],
                multi_head_attention=p["multi_head_attention"],
                **kw,
            )

        expected = run(check(), probes)
        if _same_report(student, expected, probes) is True:
            return None
        strict = False
        for k in (2, 1):  # right given (some of) its own callees?
            for names in itertools.combinations(CALLEES["cross_check"], k):
                cand = run(check({n: own[n] for n in names}), probes)
                verdict = _same_report(student, cand, probes)
                strict |= verdict == "strict"
                raised = all(not o.ok for o in student) and all(not o.ok for o in cand)
                if verdict is True or raised:
                    wrong = tuple(n for n in names if self.wrong(n))
                    # right callees: the student's pipeline differs from ours by rounding only
                    return self.blame_callees("cross_check", wrong) if wrong else None
        wrong = {n: own[n] for n in own if self.wrong(n)}
        for over in [None, wrong] if wrong else [None]:
            for mid, variants in mut.CROSS_CHECK.items():
                for kw in variants:
                    if _same_report(student, run(check(over, **kw), probes), probes) is True:
                        if over is None:
                            return self.in_function("cross_check", (mid,), inline=False)
                        extra = tuple(i for n in wrong for i in self.diagnose(n).misconceptions)
                        text = _catalogue_text((mid,)) + "".join(
                            f" Also, about your {n}: {self.diagnose(n).message}" for n in wrong
                        )
                        return _named((mid, *extra), "cross_check", text, "cross_check")
        if strict or _same_report(student, expected, probes) == "strict":
            return self.in_function("cross_check", ("adapter-strict-tolerance",), inline=False)
        if all(not o.ok for o in student):
            return self.raised("cross_check", student, probes)
        _, text = _report_difference(student, expected, probes)
        return self.plain("cross_check", f"Your cross_check {text}.")

    # --- distinct_head_pairs / parameter_counts ----------------------------------------

    def _distinct_head_pairs(self) -> Diagnosis | None:
        probes = pr.distinct_probes()
        student = run(self.fn("distinct_head_pairs"), probes)
        expected = run(ref.distinct_head_pairs, probes)
        if all(_same_pairs(s, e) for s, e in zip(student, expected, strict=True)):
            return None
        if self.not_attempted(student):
            return None

        def describe(got, want, probe):
            try:
                got_set = {_pair(p) for p in got}
            except Exception:
                return "did not return a list of (i, j) pairs of ints"
            extra, missing = got_set - set(want), set(want) - got_set
            notes = []
            if any(i >= j for i, j in got_set):
                notes.append("includes pairs with i >= j (list each pair once, i < j)")
            if extra:
                notes.append(
                    f"lists {len(extra)} pair(s) of heads whose patterns agree within atol"
                )
            if missing:
                notes.append(
                    f"misses {len(missing)} pair(s) of heads that differ by more than atol"
                )
            if not notes and [tuple(p) for p in got] != want:
                notes.append("lists the right pairs but not in lexicographic order")
            return "; ".join(notes)

        _, text = first_difference(student, expected, probes, describe)
        return self.plain("distinct_head_pairs", f"Your distinct_head_pairs is not right: {text}.")

    def _parameter_counts(self) -> Diagnosis | None:
        probes = pr.count_probes()
        student = run(self.fn("parameter_counts"), probes)
        expected = run(ref.parameter_counts, probes)
        if matches(student, expected) or self.not_attempted(student):
            return None

        def describe(got, want, probe):
            if not isinstance(got, dict) or set(got) != set(want):
                return "did not return a dict keyed by the head counts asked for"
            values = set(got.values())
            if len(values) > 1:
                return (
                    "gives different counts for different numbers of heads, yet splitting "
                    "into heads adds no parameters"
                )
            return "gives a count that differs from what the torch module has"

        _, text = first_difference(student, expected, probes, describe)
        return self.plain("parameter_counts", f"Your parameter_counts {text}.")


# --- helpers ----------------------------------------------------------------------------


def _finite(v) -> bool:
    a = as_array(v)
    return a is not None and bool(np.isfinite(a).all())


def _default_axis(softmax: Callable) -> Callable:
    """The student's softmax called as ``softmax(x)``, relying on its default axis."""
    return lambda x, axis=-1: softmax(x)


def _softmax_over_other_axes(student: list[Outcome], probes) -> bool:
    """Every result is a softmax over some axis, and at least one over the wrong axis."""
    other = False
    for s, p in zip(student, probes, strict=True):
        if not s.ok:
            return False
        x = p.args[0]
        axis = p.kwargs.get("axis", -1) % x.ndim
        axes = [a for a in range(x.ndim) if same_array(s.value, ref.softmax(x, axis=a))]
        if not axes:
            return False
        other |= axis not in axes
    return other


def _softmax_global(student: list[Outcome], probes) -> bool:
    """Every result is non-negative and sums to 1 over the whole array (not along the axis)."""
    for s, p in zip(student, probes, strict=True):
        a = as_array(s.value) if s.ok else None
        if a is None or a.shape != p.args[0].shape or not np.isfinite(a).all():
            return False
        if (a < -1e-12).any() or not np.isclose(a.sum(), 1.0, atol=1e-6):
            return False
    return True


def _identify_blocks(mha, Ws) -> list[tuple[str, bool]] | None:
    """For each returned matrix, which torch block it is and whether it was left untransposed."""
    if not isinstance(Ws, tuple | list) or len(Ws) != 4:
        return None
    blocks = mut.torch_blocks(mha)
    names = []
    for W in Ws:
        hit = next(
            (
                (b, untransposed)
                for b in "qkvo"
                for untransposed in (False, True)
                if same_array(W, blocks[b] if untransposed else blocks[b].T)
            ),
            None,
        )
        if hit is None:
            return None
        names.append(hit)
    return names


def _close(a, b, dtype: str) -> bool:
    """Two reported differences agree: equal, or both at rounding level for the dtype."""
    tiny = 1e-4 if dtype == "float32" else 1e-9
    if a <= tiny and b <= tiny:
        return True
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))


def _same_report(student: list[Outcome], candidate: list[Outcome], probes):
    """True: the student's reports are the candidate's, with a fitting ``match``; "strict":
    the same, except float32 modules called mismatched for rounding; None otherwise."""
    strict = False
    for s, c, p in zip(student, candidate, probes, strict=True):
        if s.ok != c.ok:
            return None
        if not s.ok:
            continue
        r = s.value
        keys = ("output_max_abs_diff", "weights_max_abs_diff", "match")
        if not isinstance(r, dict) or any(k not in r for k in keys):
            return None
        dtype = str(p.args[0].in_proj_weight.dtype).removeprefix("torch.")
        try:
            got = [float(r["output_max_abs_diff"]), float(r["weights_max_abs_diff"])]
        except (TypeError, ValueError):
            return None
        want = [c.value["output_max_abs_diff"], c.value["weights_max_abs_diff"]]
        if not all(_close(g, w, dtype) for g, w in zip(got, want, strict=True)):
            return None
        worst = max(want)
        if worst <= 1e-10 and not r["match"]:
            return None  # equal to float64 rounding, yet called a mismatch
        if worst > 1e-3 and r["match"]:
            return None  # clearly different, yet called a match
        if 1e-10 < worst <= 1e-4 and not r["match"] and dtype == "float32":
            strict = True  # float32 rounding called a mismatch
    return "strict" if strict else True


def _report_difference(student: list[Outcome], expected: list[Outcome], probes):
    for i, (s, e, p) in enumerate(zip(student, expected, probes, strict=True)):
        where = f"for {p.describe()}"
        if not s.ok:
            return i, f"{where}: {error_text(s.error)}"
        r = s.value
        if not isinstance(r, dict) or any(
            k not in r for k in ("output_max_abs_diff", "weights_max_abs_diff", "match")
        ):
            return i, (
                "did not return a dict with output_max_abs_diff, weights_max_abs_diff and match "
                + where
            )
        if _same_report([s], [e], [p]) is not True:
            return i, (
                f"reports differences (or a match) {where} other than what running the module "
                "and your own pipeline gives"
            )
    return -1, "differs from the reference"


def _pair(p) -> tuple[int, ...]:
    """A pair of head indices as plain ints; TypeError for anything that is not integers."""
    if not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in p):
        raise TypeError("not a pair of ints")
    return tuple(int(x) for x in p)


def _same_pairs(s: Outcome, e: Outcome) -> bool:
    if not s.ok:
        return False
    try:
        return [_pair(p) for p in s.value] == e.value
    except Exception:
        return False
