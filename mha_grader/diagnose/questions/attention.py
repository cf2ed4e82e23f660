"""attention: right given the student's softmax (blame it), a catalogued mistake of its own
(with the reference softmax, the student's, or one written inline), two of its own at once,
else what is off. A mistake that fits one rank of input says which ranks it got right."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from solutions import multihead as ref

from ... import errors
from .. import mutants as mut
from .. import probes as pr
from .. import properties
from ..catalogue import CATALOGUE
from ..compare import matches, run, same
from ..explain import array_diff, first_difference
from ..result import Diagnosis, named
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def default_axis(softmax: Callable) -> Callable:
    """The student's softmax called as ``softmax(x)``, relying on its default axis."""
    return lambda x, axis=-1: softmax(x)


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    probes = pr.attention_probes()
    student = s.student("attention", probes)
    expected = trusted(("ref", "attention"), mut.attention_ref, probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    own = s.fn("softmax")
    own_default = default_axis(own)
    if s.wrong("softmax"):  # right given the student's own softmax?
        for sm in (own, own_default):
            if matches(student, run(partial(mut.attention_ref, softmax=sm), probes), True):
                return s.blame_callees("attention", ("softmax",))
    softmaxes: list[tuple[tuple[str, ...], Callable]] = [((), ref.softmax)]
    softmaxes += [((i,), f) for i, fs in mut.SOFTMAX.items() for f in fs]
    attentions: list[tuple[tuple[str, ...], Callable]] = [((), mut.attention_ref)]
    attentions += [((i,), f) for i, fs in mut.ATTENTION.items() for f in fs]
    for a_ids, a in attentions[1:]:  # an own mistake, with the reference softmax
        if matches(student, trusted((a,), a, probes)):
            return _with_ranks(s, s.in_function("attention", a_ids, inline=False), student, a)
    if s.wrong("softmax"):  # an own mistake on top of the student's wrong softmax
        for (a_ids, a), sm in itertools.product(attentions[1:], (own, own_default)):
            if matches(student, run(partial(a, softmax=sm), probes)):
                found = s.with_callees("attention", a_ids, ["softmax"])
                return _with_ranks(s, found, student, a)
    for (a_ids, a), (s_ids, sm) in itertools.product(attentions, softmaxes[1:]):
        if matches(student, trusted((a, sm), partial(a, softmax=sm), probes)):  # inline softmax
            return s.in_function("attention", a_ids + s_ids, inline=not a_ids)
    pairs = [(ids, f) for ids, fs in mut.ATTENTION_COMBINED.items() for f in fs]
    for a_ids, a in pairs:  # two mistakes of its own at once
        if matches(student, trusted((a,), a, probes)):
            return _with_ranks(s, s.in_function("attention", a_ids, inline=False), student, a)
    if s.wrong("softmax"):
        for (a_ids, a), sm in itertools.product(pairs, (own, own_default)):
            if matches(student, run(partial(a, softmax=sm), probes)):
                return s.with_callees("attention", a_ids, ["softmax"])
    if all(not o.ok for o in student):
        return s.raised("attention", student, probes)

    def describe(got, want, probe):
        if not isinstance(got, tuple | list) or len(got) != 2:
            return "did not return a pair (out, weights)"
        parts = []
        for label, g, w in (("out", got[0], want[0]), ("weights", got[1], want[1])):
            if not same(g, w):
                names = ("head", "query", "key" if label == "weights" else "feature")
                parts.append(f"{label}: {array_diff(g, w, names)}")
        return "; ".join(parts + _properties(s, got, want, probe))

    _, text = first_difference(student, expected, probes, describe)
    return s.plain("attention", f"Your attention differs from the reference: {text}.")


RANK_SPECIFIC = ("attention-3d-transpose", "attention-fixed-rank")


# What a mistake fixed for one rank fixed, by the slot of attention it changes.
FIXED = {
    "transpose": " Here it is how K is transposed.",
    "axis": " Here it is the axis of the softmax.",
    "scale": " Here it is the width d_k, read from axis 1.",
    "product": " Here it is the product itself: NumPy's dot pairs fixed axes.",
}


def _with_ranks(s: DiagnosisSession, found: Diagnosis, student, mutant) -> Diagnosis:
    """For a mistake that fits one rank of input: what was fixed, and which ranks of our inputs
    it got right."""
    if not set(found.misconceptions) & set(RANK_SPECIFIC):
        return found
    changes = dict(getattr(mutant, "changes", {}))
    if "attention-fixed-rank" not in found.misconceptions:
        changes.pop("transpose", None)  # K.T: its message says so already
    if changes.get("scale") != "sqrt-axis1":
        changes.pop("scale", None)  # a wrong scale is a mistake of its own, with its message
    text = "".join(FIXED[slot] for slot in FIXED if slot in changes)
    probes = pr.attention_probes()
    expected = trusted(("ref", "attention"), mut.attention_ref, probes)
    right: set[int] = set()
    wrong: set[int] = set()
    for got, want, p in zip(student, expected, probes, strict=True):
        (right if matches([got], [want]) else wrong).add(p.args[0].ndim)
    if right and wrong:
        ranks = " and ".join(f"{r}-D" for r in sorted(right))
        others = " and ".join(f"{r}-D" for r in sorted(wrong - right))
        text += f" On our inputs it is right for {ranks} ones"
        text += f" and fails for {others} ones." if others else ", but not for all of them."
    # said right after the rank-specific mistake's own message
    last = [CATALOGUE[i].message for i in found.misconceptions if i in RANK_SPECIFIC][-1]
    message = found.message.replace(last, last + text, 1)
    return named(found.misconceptions, found.blame, message, found.question)


def _properties(s: DiagnosisSession, got, want, probe) -> list[str]:
    """What a right attention always has, said of the student's result on this probe."""
    out, weights = got
    Q, K, V = probe.args
    moved = properties.transposed(weights, want[1])
    found = [f"its weights: {moved}"] if moved else []
    found += [] if moved else [f"its weights: {t}" for t in properties.rows(weights)]
    product = properties.out_is_weights_times_v(out, weights, V)
    if product:
        found.append(product)
    elif not found and not same(weights, want[1]):
        found.append(
            "its weights are probabilities over the keys and out is its weights times V, so "
            "the scores are what differ: check Q Kᵀ (K transposed on its last two axes) and "
            "the scaling by sqrt(d_k)"
        )
    try:  # an output that ignores V (one more call, only to explain an unknown mistake)
        again = s.fn("attention")(Q, K, V * 2.0 + 1.0)
        if isinstance(again, tuple | list) and len(again) == 2:
            ignored = properties.ignores(again[0], out, "V")
            if ignored:
                found.append(f"its out: {ignored}")
    except errors.StudentCodeError:
        pass
    return found
