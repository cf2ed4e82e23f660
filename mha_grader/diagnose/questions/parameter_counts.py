"""parameter_counts: what the counts got wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING

from solutions import multihead as ref

from .. import probes as pr
from .. import properties
from ..compare import matches
from ..explain import first_difference
from ..result import Diagnosis
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "parameter_counts"
    probes = pr.count_probes()
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), ref.parameter_counts, probes)
    if matches(student, expected) or s.not_attempted(student):
        return None

    def describe(got, want, probe):
        if not isinstance(got, dict) or set(got) != set(want):
            return "did not return a dict keyed by the head counts asked for"
        if all(got[h] == want[h] for h in want):
            return ""
        d_model, heads = probe.args
        if probe.kwargs.get("bias"):
            without = ref.parameter_counts(d_model, heads, bias=False)
            found = properties.counts(got, want, without, d_model)
            if found:
                return "; ".join(found)
        values = set(got.values())
        if len(values) > 1:
            return (
                "gives different counts for different numbers of heads, yet splitting "
                "into heads adds no parameters"
            )
        bias = "with" if probe.kwargs.get("bias") else "without"
        return (
            f"gives a count that differs from what the torch module has: for d_model = "
            f"{d_model} {bias} biases, nn.MultiheadAttention has {want[heads[0]]} parameters "
            "whatever the number of heads"
        )

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your parameter_counts {text}.")
