"""multi_head_attention: right given (some of) the student's callees, called on the stacked heads
or head by head (blame them), a catalogued mistake of its own or made inline, else what is off;
and the ValueError for num_heads that do not divide d_model."""

from __future__ import annotations

import itertools
from functools import partial
from typing import TYPE_CHECKING

from solutions import multihead as ref

from ... import errors
from .. import mutants as mut
from .. import probes as pr
from .. import properties
from ..compare import matches, run, same
from ..explain import array_diff, first_difference
from ..result import Diagnosis
from ..trusted import trusted
from ._refusal import add_missing_refusal

if TYPE_CHECKING:
    from ..session import DiagnosisSession


CALLEES = ("split_heads", "attention", "merge_heads")
REFERENCE = {
    "split_heads": ref.split_heads,
    "attention": mut.attention_ref,
    "merge_heads": ref.merge_heads,
}


def pipeline(impl=mut.mha_ref, **over):
    """``impl`` (the reference composition or a mutant of it) with some callees replaced."""
    callees = {**REFERENCE, **over}
    return partial(
        impl,
        split=callees["split_heads"],
        attention=callees["attention"],
        merge=callees["merge_heads"],
    )


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "multi_head_attention"
    probes = pr.mha_probes()
    found = _values(s, qid, probes)
    refusals = pr.mha_refusal_probes()
    return add_missing_refusal(s, qid, probes, refusals, found, "mha-no-valueerror")


def _callee_styles(names: tuple[str, ...], own: dict) -> list[dict]:
    """The student's callees ``names`` as a composite may call them: attention on the stacked
    heads, or head by head on 2-D slices (loop-style code)."""
    over = {n: own[n] for n in names}
    if "attention" not in names:
        return [over]
    return [over, {**over, "attention": mut.per_head(own["attention"])}]


def _values(s: DiagnosisSession, qid: str, probes) -> Diagnosis | None:
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), pipeline(), probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    wrong = [n for n in CALLEES if s.wrong(n)]
    own = {n: s.fn(n) for n in wrong}
    # right given (some of) its own callees? The fewest that explain it: a callee whose
    # mistake does not show in the calls the composite makes is not to blame
    for k in range(1, len(wrong) + 1):
        for names in itertools.combinations(wrong, k):
            for over in _callee_styles(names, own):
                if matches(student, run(pipeline(**over), probes), vacuous=True):
                    return s.blame_callees(qid, names)
    for mid, fs in mut.MHA.items():
        for f in fs:
            if matches(student, trusted((f,), pipeline(f), probes)):
                return s.in_function(qid, (mid,), inline=False)
    for mid, callee, f in _inline():
        key = (mid, callee, getattr(f, "func", f), getattr(f, "keywords", {}).get("softmax"))
        if matches(student, trusted(key, pipeline(**{callee: f}), probes)):
            return s.in_function(qid, (mid,), inline=True)
    if wrong:
        for mid, fs in mut.MHA.items():
            for f in fs:
                if matches(student, run(pipeline(f, **own), probes)):
                    return s.with_callees(qid, (mid,), wrong)
    if all(not o.ok for o in student):
        return s.raised(qid, student, probes)

    def describe(got, want, probe):
        if not isinstance(got, tuple | list) or len(got) != 2:
            return "did not return a pair (out, weights)"
        parts = []
        if not same(got[1], want[1]):
            parts.append(f"weights: {array_diff(got[1], want[1], ('head', 'query', 'key'))}")
        if not same(got[0], want[0]):
            parts.append(f"out: {array_diff(got[0], want[0], ('token', 'feature'))}")
        return "; ".join(parts + _properties(s, got, want, probe))

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your multi_head_attention differs from the reference: {text}.")


def _inline() -> list[tuple[str, str, object]]:
    """A callee's catalogued mistake made inside multi_head_attention: (id, callee, mutant).
    Those that are one of its own there (``INLINE_AS_MHA``) are left to its own table."""
    found: list[tuple[str, str, object]] = []
    found += [(i, "split_heads", f) for i, fs in mut.SPLIT.items() for f in fs]
    found += [(i, "merge_heads", f) for i, fs in mut.MERGE.items() for f in fs]
    found += [(i, "attention", f) for i, fs in mut.ATTENTION.items() for f in fs]
    found += [
        (i, "attention", partial(mut.attention_ref, softmax=f))
        for i, fs in mut.SOFTMAX.items()
        for f in fs
    ]
    return [(i, c, f) for i, c, f in found if i not in mut.INLINE_AS_MHA]


def _properties(s: DiagnosisSession, got, want, probe) -> list[str]:
    """What a right multi-head attention always has, said of the student's result."""
    out, weights = got
    found = [f"its weights: {t}" for t in properties.rows(weights)]
    alike = properties.alike_heads(weights, want[1])
    if alike:
        found.append(alike)
    moved = properties.transposed(out, want[0])
    if moved:
        found.append(f"its out: {moved}")
    X, Wq, Wk, Wv, Wo, h = probe.args
    for label, args in (
        ("Wv", (X, Wq, Wk, Wv * 2.0 + 0.5, Wo, h)),
        ("Wo", (X, Wq, Wk, Wv, Wo[::-1].copy(), h)),
    ):
        try:  # an output that ignores Wv or Wo (only to explain an unknown mistake)
            again = s.fn("multi_head_attention")(*args)
        except errors.StudentCodeError:
            continue
        if isinstance(again, tuple | list) and len(again) == 2:
            ignored = properties.ignores(again[0], out, label)
            if ignored:
                found.append(f"its out: {ignored}")
    return found
