"""How closely the rubrics agree with a teacher on labelled sets of sample answers.

Run after editing a rubric:  python -m mha_grader.written.agreement [LABELLED.toml ...]
(default: every tests/data/written_*.toml). A labelled file holds ``[[answer]]`` tables with
``question``, ``kind``, ``points`` (the teacher's), ``text`` and optionally ``review = true``,
and may hold ``[[sheet]]`` tables: a whole answer sheet (``kind``, the teacher's ``points`` for
it, and one answer per question id). A set still held out (its first line says "# HELD OUT")
shows its figures only, not its answers' results, unless asked with --show-held-out.

The grader's job on a written answer is to be right or to say it is unsure, so the figures that
matter are, per set: the share of answers that are *right or flagged* (within a quarter of the
question's points of the teacher's mark, or tagged needs-review), the share *flagged*, and the
*highest score given to a wrong answer* (one the teacher gave at most a quarter of the points),
as a share of the question's points, and how many answers the teacher gave nothing are graded
above half marks. A sheet of disowned or copied ideas passes when it earns at most a quarter of
the written points, or when every answer of it that earns more than a quarter of its points is
flagged for a person; a sheet the teacher gave more (right answers in such frames) passes when
its grade is within a quarter of the written points of the teacher's.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mha_check.answers import parse_answers
from mha_check.questions import WRITTEN_QUESTIONS

from ..paths import ROOT
from ..points import POINTS
from .grade import NEEDS_REVIEW, grade_answer, grade_written

DATA = ROOT / "tests" / "data"
DEFAULT_SET = DATA / "written_regression.toml"
RIGHT_WITHIN = 0.25  # of the question's points: "right" is within a quarter of the teacher's mark
WRONG_AT_MOST = 0.25  # of the question's points: the teacher's mark of a wrong answer
# the targets every set is held to
TARGET_RIGHT_OR_FLAGGED = 0.95
TARGET_FLAGGED = 0.20
SHEET_AT_MOST = 0.25  # of the written points, for a sheet of disowned or copied ideas


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
        # the teacher gave nothing, the grader more than half
        "zero_above_half": sum(g.label == 0 and g.score > POINTS[g.question] / 2 for g in graded),
        "full_answers_mean_share": mean(full),  # what answers worth full marks get
        "flagged": len(graded) - len(alone),
        "mean_abs_diff": mean([g.diff for g in graded]),
        "within_0.5": mean([g.diff <= 0.5 for g in graded]),
        "within_1": mean([g.diff <= 1.0 for g in graded]),
        "mean_abs_diff_unflagged": mean([g.diff for g in alone]),
        "within_1_unflagged": mean([g.diff <= 1.0 for g in alone]),
        "mean_share_diff": mean([g.diff / POINTS[g.question] for g in graded]),
    }


def meets_targets(figures: dict[str, float]) -> bool:
    return (
        figures["right_or_flagged"] >= TARGET_RIGHT_OR_FLAGGED
        and figures["flagged_share"] <= TARGET_FLAGGED
        and figures["zero_above_half"] == 0
    )


@dataclass(frozen=True)
class GradedSheet:
    kind: str
    label: float  # the teacher's points for the whole sheet
    score: float  # the grader's
    total: float  # the written points
    flagged_points: float  # the grader's points on the answers it flagged for a person
    # answers the grader settled alone with more than a quarter of their points
    unflagged_over_quarter: int

    @property
    def passes(self) -> bool:
        """A sheet of disowned or copied ideas (the teacher gave it at most a quarter of the
        written points): at most a quarter, or a person reads whatever earns more. A sheet of
        right answers put in such frames ("Although some think X, in fact Y", which the teacher
        gave more): within a quarter of the written points of the teacher's mark."""
        if self.label > SHEET_AT_MOST * self.total:
            return abs(self.score - self.label) <= SHEET_AT_MOST * self.total
        return self.score <= SHEET_AT_MOST * self.total or self.unflagged_over_quarter == 0


def load_sheets(path: Path) -> list[dict]:
    with open(path, "rb") as f:
        return tomllib.load(f).get("sheet", [])


def sheet_text(sheet: dict) -> str:
    """A sheet as answers.md: each answer under its heading and a quote."""
    parts = []
    for q in WRITTEN_QUESTIONS:
        heading = "Challenge" if q == "challenge" else q.upper()
        parts.append(f"## {heading}\n\n> The question.\n\n{sheet[q]}\n")
    return "\n".join(parts)


def grade_sheet(sheet: dict) -> GradedSheet:
    results = grade_written(sheet_text(sheet))
    flagged = [NEEDS_REVIEW in r.tags for r in results]
    return GradedSheet(
        sheet["kind"],
        float(sheet["points"]),
        sum(r.score for r in results),
        float(sum(POINTS[q] for q in WRITTEN_QUESTIONS)),
        sum(r.score for r, f in zip(results, flagged, strict=True) if f),
        sum(
            r.score > SHEET_AT_MOST * POINTS[r.question]
            for r, f in zip(results, flagged, strict=True)
            if not f
        ),
    )


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
        figures = summary(graded)
        for key, value in figures.items():
            print(f"  {key:24} {value:.3f}" if isinstance(value, float) else f"  {key:24} {value}")
        verdict = "meets" if meets_targets(figures) else "MISSES"
        print(
            f"  {verdict} the targets (right or flagged >= {TARGET_RIGHT_OR_FLAGGED:.0%}, "
            f"flagged <= {TARGET_FLAGGED:.0%}, no answer the teacher gave 0 above half marks)"
        )
        for sheet in load_sheets(path):
            g = grade_sheet(sheet)
            rule = (
                f"within {SHEET_AT_MOST:.0%} of the points of the teacher's"
                if g.label > SHEET_AT_MOST * g.total
                else f"at most {SHEET_AT_MOST:.0%} of the points, or flagged"
            )
            print(
                f"  sheet {g.kind:10} teacher {g.label:<4} grader {g.score:<5} of {g.total:.0f} "
                f"({g.flagged_points} on flagged answers): "
                + ("passes" if g.passes else "FAILS")
                + f" ({rule})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
