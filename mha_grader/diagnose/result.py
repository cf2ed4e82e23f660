"""A diagnosis: why a code question lost points, and which function the bug is in."""

from __future__ import annotations

from dataclasses import dataclass

from ..outcomes import Tag
from .catalogue import CATALOGUE, ELSEWHERE


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
        return [Tag.misconception(m) for m in self.misconceptions]


def named(
    ids: tuple[str, ...],
    blame: str | None,
    message: str,
    qid: str,
    roots: tuple[tuple[str, str], ...] | None = None,
) -> Diagnosis:
    roots = roots if roots is not None else ((blame, message),)
    return Diagnosis(ids[0] if ids else None, message, blame, ids, qid, roots)


def catalogue_text(ids: tuple[str, ...], where: str | None = None) -> str:
    """The catalogue's messages of ``ids``; a mistake made in ``where``, another function than
    its entry's, in the words its entry has for that function (``ELSEWHERE``)."""
    return " ".join(ELSEWHERE.get((i, where or ""), CATALOGUE[i]).message for i in ids)
