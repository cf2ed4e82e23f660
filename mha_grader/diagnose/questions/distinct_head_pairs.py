"""distinct_head_pairs: which pairs are missing or extra, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from .. import mutants as mut
from .. import probes as pr
from ..compare import Outcome
from ..explain import first_difference
from ..result import Diagnosis
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "distinct_head_pairs"
    probes = pr.distinct_probes()
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), ref.distinct_head_pairs, probes)
    if all(same_pairs(got, e) for got, e in zip(student, expected, strict=True)):
        return None
    if s.not_attempted(student):
        return None
    for mid, fs in mut.DISTINCT.items():
        for f in fs:
            if all(
                same_pairs(got, e) for got, e in zip(student, trusted((f,), f, probes), strict=True)
            ):
                return s.in_function(qid, (mid,), inline=False)

    def describe(got, want, probe):
        try:
            got_set = {pair(p) for p in got}
        except Exception:
            return "did not return a list of (i, j) pairs of ints"
        extra, missing = got_set - set(want), set(want) - got_set
        notes = []
        if any(i >= j for i, j in got_set):
            notes.append("includes pairs with i >= j (list each pair once, i < j)")
        if extra:
            notes.append(f"lists {len(extra)} pair(s) of heads whose patterns agree within atol")
        if missing:
            notes.append(f"misses {len(missing)} pair(s) of heads that differ by more than atol")
        if not notes and [tuple(p) for p in got] != want:
            notes.append("lists the right pairs but not in lexicographic order")
        return "; ".join(notes)

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your distinct_head_pairs is not right: {text}.")


def pair(p) -> tuple[int, ...]:
    """A pair of head indices as plain ints; TypeError for anything that is not integers."""
    if not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in p):
        raise TypeError("not a pair of ints")
    return tuple(int(x) for x in p)


def same_pairs(got: Outcome, e: Outcome) -> bool:
    if not got.ok:
        return False
    try:
        return [pair(p) for p in got.value] == e.value
    except Exception:
        return False
