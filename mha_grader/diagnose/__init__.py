"""Name the misconception behind a wrong answer, and the function it lives in (contract §6)."""

from .catalogue import CATALOGUE, CONTRACT_IDS, Misconception
from .core import Diagnosis, diagnose, diagnose_all

__all__ = ["CATALOGUE", "CONTRACT_IDS", "Diagnosis", "Misconception", "diagnose", "diagnose_all"]
