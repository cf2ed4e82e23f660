"""What the written-answer tests share: an answer's grade as a share of its question's points,
and the stance the grader reads for each word of it."""

from __future__ import annotations

from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, grade_answer
from mha_grader.written.rubric import load_rubrics
from mha_grader.written.stance import Frame, read_stances


def share(qid: str, text: str) -> float:
    return grade_answer(qid, text).score / POINTS[qid]


def graded(qid: str, text: str) -> tuple[float, bool, str]:
    """(share of the points, flagged for review, the output)."""
    result = grade_answer(qid, text)
    return result.score / POINTS[qid], NEEDS_REVIEW in result.tags, result.output


def word_frames(text: str, qid: str) -> list[dict[str, Frame]]:
    """Each sentence's words and their frames (a word met twice keeps its last frame)."""
    sentences = load_rubrics()[qid].normaliser.sentences(text)
    return [
        {t.word: st.frame(i) for i, t in enumerate(s.tokens)}
        for s, st in zip(sentences, read_stances(sentences), strict=True)
    ]
