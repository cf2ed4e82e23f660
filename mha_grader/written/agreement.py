"""How closely the rubrics agree with a teacher on labelled sets of sample answers.

Run after editing a rubric:  python -m mha_grader.written.agreement [LABELLED.toml ...]
(default: every tests/data/written_*.toml). A labelled file holds ``[[answer]]`` tables with
``question``, ``kind``, ``points`` (the teacher's), ``text`` and optionally ``review = true``.

The grader's job on a written answer is to be right or to say it is unsure, so the figures that
matter are, per set: the share of answers that are *right or flagged* (within a quarter of the
question's points of the teacher's mark, or tagged needs-review), the share *flagged*, and the
*highest score given to a wrong answer* (one the teacher gave at most a quarter of the points),
as a share of the question's points.
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

DATA = ROOT / "tests" / "data"
DEFAULT_SET = DATA / "written_regression.toml"
RIGHT_WITHIN = 0.25  # of the question's points: "right" is within a quarter of the teacher's mark
WRONG_AT_MOST = 0.25  # of the question's points: the teacher's mark of a wrong answer


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

    @property
    def right(self) -> bool:
        return self.diff <= RIGHT_WITHIN * POINTS[self.question]

    @property
    def wrong_answer(self) -> bool:
        return self.label <= WRONG_AT_MOST * POINTS[self.question]


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

    wrong = [g.score / POINTS[g.question] for g in graded if g.wrong_answer]
    full = [g.score / POINTS[g.question] for g in graded if g.label == POINTS[g.question]]
    return {
        "answers": len(graded),
        "right_or_flagged": mean([g.right or g.flagged for g in graded]),
        "flagged_share": mean([g.flagged for g in graded]),
        "max_wrong_share": max(wrong, default=0.0),
        "full_answers_mean_share": mean(full),  # what answers worth full marks get
        "flagged": len(graded) - len(alone),
        "mean_abs_diff": mean([g.diff for g in graded]),
        "within_0.5": mean([g.diff <= 0.5 for g in graded]),
        "within_1": mean([g.diff <= 1.0 for g in graded]),
        "mean_abs_diff_unflagged": mean([g.diff for g in alone]),
        "within_1_unflagged": mean([g.diff <= 1.0 for g in alone]),
        "mean_share_diff": mean([g.diff / POINTS[g.question] for g in graded]),
    }


def labelled_sets() -> list[Path]:
    return sorted(DATA.glob("written_*.toml"))


def held_out(path: Path) -> bool:
    """A set still held out says so on its first line: its answers' own results are not shown
    (only its figures), so that no rubric is tuned on them."""
    with open(path, encoding="utf-8") as f:
        return f.readline().startswith("# HELD OUT")


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    show = "--show-held-out" in args
    paths = [Path(p) for p in args if p != "--show-held-out"] or labelled_sets()
    for path in paths:
        graded = grade_labelled(load_labelled(path))
        hidden = held_out(path) and not show
        print(f"{path}:" + (" (held out: figures only)" if hidden else ""))
        for g in sorted(graded, key=lambda g: -g.diff)[:10]:
            if not g.right and not g.flagged and not hidden:
                print(f"  {g.question:9} {g.kind:13} teacher {g.label:<4} grader {g.score}")
        for key, value in summary(graded).items():
            print(f"  {key:24} {value:.3f}" if isinstance(value, float) else f"  {key:24} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
