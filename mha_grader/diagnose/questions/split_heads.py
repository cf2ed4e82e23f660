"""split_heads: a catalogued reshaping mistake, else what is off."""

from __future__ import annotations

from typing import TYPE_CHECKING

from solutions import multihead as ref

from .. import mutants as mut
from .. import probes as pr
from ..result import Diagnosis
from ._heads import diagnose_reshaping

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    names = ("head", "token", "feature")
    return diagnose_reshaping(
        s, "split_heads", pr.split_probes(), ref.split_heads, mut.SPLIT, names
    )
