"""How closely the rubrics agree with a teacher on a labelled set of sample answers.

Run after editing a rubric:  python -m mha_grader.written.agreement [LABELLED.toml ...]
(default: tests/data/written_regression.toml). A labelled file holds ``[[answer]]`` tables with
``question``, ``kind``, ``points`` (the teacher's), ``text`` and optionally ``review = true``.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mha_check.answers import parse_answers

from ..paths import ROOT
from ..questions import POINTS
from .grade import NEEDS_REVIEW, grade_answer

DEFAULT_SET = ROOT / "tests" / "data" / "written_regression.toml"


@dataclass(frozen=True)
class Graded:
    question: str
    kind: str
    label: float  # the teacher's points
    score: float  # the grader's points
    flagged: bool
    expect_review: bool
    text: str

    @property
    def diff(self) -> float:
        return abs(self.score - self.label)


def load_labelled(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return tomllib.load(f)["answer"]


def grade_labelled(entries: Iterable[dict]) -> list[Graded]:
    """Grade each sample as it would arrive: inside answers.md, under its heading and quote."""
    graded = []
    for e in entries:
        qid = e["question"]
        heading = "Challenge" if qid == "challenge" else qid.upper()
        text = parse_answers(f"## {heading}\n\n> The question.\n\n{e['text']}\n")[qid]
        result = grade_answer(qid, text)
        graded.append(
            Graded(
                qid,
                e["kind"],
                float(e["points"]),
                result.score,
                NEEDS_REVIEW in result.tags,
                bool(e.get("review", False)),
                e["text"],
            )
        )
    return graded


def summary(graded: list[Graded]) -> dict[str, float]:
    """Mean absolute difference in points, and the share within 0.5 and within 1 point, over
    all answers and over those the grader settles alone (not flagged for review)."""
    alone = [g for g in graded if not g.flagged]

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    return {
        "answers": len(graded),
        "flagged": len(graded) - len(alone),
        "mean_abs_diff": mean([g.diff for g in graded]),
        "within_0.5": mean([g.diff <= 0.5 for g in graded]),
        "within_1": mean([g.diff <= 1.0 for g in graded]),
        "mean_abs_diff_unflagged": mean([g.diff for g in alone]),
        "within_1_unflagged": mean([g.diff <= 1.0 for g in alone]),
        "mean_share_diff": mean([g.diff / POINTS[g.question] for g in graded]),
    }


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])] or [DEFAULT_SET]
    for path in paths:
        graded = grade_labelled(load_labelled(path))
        print(f"{path}:")
        for g in sorted(graded, key=lambda g: -g.diff)[:10]:
            if g.diff:
                flag = " (needs-review)" if g.flagged else ""
                print(f"  {g.question:9} {g.kind:13} teacher {g.label:<4} grader {g.score}{flag}")
        for key, value in summary(graded).items():
            print(f"  {key:24} {value:.3f}" if isinstance(value, float) else f"  {key:24} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
