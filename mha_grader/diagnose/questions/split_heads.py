"""split_heads: a catalogued reshaping mistake, else what is off; and the ValueError for a
width other than num_heads * d_head."""

from __future__ import annotations

from typing import TYPE_CHECKING

from solutions import multihead as ref

from .. import mutants as mut
from .. import probes as pr
from ..result import Diagnosis
from ._heads import diagnose_reshaping
from ._refusal import add_missing_refusal

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    names = ("head", "token", "feature")
    probes = pr.split_probes()
    found = diagnose_reshaping(s, "split_heads", probes, ref.split_heads, mut.SPLIT, names)
    return add_missing_refusal(
        s, "split_heads", probes, pr.split_refusal_probes(), found, "split-no-valueerror"
    )
