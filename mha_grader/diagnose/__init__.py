"""Name the misconception behind a wrong answer and the function it is in (docs/contract.md §6)."""

from .attach import explain_failures
from .catalogue import CATALOGUE, CONTRACT_IDS, Misconception
from .core import Diagnoser, Diagnosis, diagnose, diagnose_all

__all__ = [
    "Diagnoser",
    "explain_failures",
    "CATALOGUE",
    "CONTRACT_IDS",
    "Diagnosis",
    "Misconception",
    "diagnose",
    "diagnose_all",
]
