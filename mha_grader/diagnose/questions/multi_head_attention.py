"""multi_head_attention: right given (some of) the student's callees (blame them), a
catalogued mistake of its own or made inline, else what is off."""

from __future__ import annotations

import itertools
from functools import partial

from solutions import multihead as ref

from .. import mutants as mut
from .. import probes as pr
from ..compare import matches, run, same
from ..explain import array_diff, first_difference
from ..result import Diagnosis
from ..session import DiagnosisSession, trusted

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
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), pipeline(), probes)
    if matches(student, expected) or s.not_attempted(student):
        return None
    wrong = [n for n in CALLEES if s.wrong(n)]
    own = {n: s.fn(n) for n in wrong}
    for k in range(len(wrong), 0, -1):  # right given (some of) its own callees?
        for names in itertools.combinations(wrong, k):
            cand = run(pipeline(**{n: own[n] for n in names}), probes)
            if matches(student, cand, vacuous=True):
                return s.blame_callees(qid, names)
    for mid, fs in mut.MHA.items():
        for f in fs:
            if matches(student, trusted((f,), pipeline(f), probes)):
                return s.in_function(qid, (mid,), inline=False)
    inline: list[tuple[str, str, object]] = []
    inline += [(i, "split_heads", f) for i, fs in mut.SPLIT.items() for f in fs]
    inline += [(i, "merge_heads", f) for i, fs in mut.MERGE.items() for f in fs]
    inline += [(i, "attention", f) for i, fs in mut.ATTENTION.items() for f in fs]
    inline += [
        (i, "attention", partial(mut.attention_ref, softmax=f))
        for i, fs in mut.SOFTMAX.items()
        for f in fs
    ]
    for mid, callee, f in inline:
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
        return "; ".join(parts)

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your multi_head_attention differs from the reference: {text}.")
