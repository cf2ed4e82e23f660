"""The module's own answer key (tests/data/written_module_key.md: its "Answers" 1-5 and the
challenge's "Discussion", verbatim) earns full marks on every written question."""

from __future__ import annotations

import pytest

from mha_check.answers import parse_answers
from mha_check.questions import WRITTEN_QUESTIONS
from mha_grader.paths import ROOT
from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, grade_answer, grade_written

KEY = ROOT / "tests" / "data" / "written_module_key.md"


@pytest.fixture(scope="module")
def results():
    return {r.question: r for r in grade_written(KEY.read_text(encoding="utf-8"))}


def test_the_key_has_an_answer_for_every_written_question():
    answers = parse_answers(KEY.read_text(encoding="utf-8"))
    assert all(answers[q] for q in WRITTEN_QUESTIONS)


@pytest.mark.parametrize("qid", WRITTEN_QUESTIONS)
def test_the_modules_answer_earns_full_marks_without_review(results, qid):
    result = results[qid]
    assert result.score == POINTS[qid], result.output
    assert NEEDS_REVIEW not in result.tags
    assert "Still missing" not in result.output and "Re-check" not in result.output


def test_the_key_earns_all_written_points(results):
    assert sum(r.score for r in results.values()) == sum(POINTS[q] for q in WRITTEN_QUESTIONS)


# the challenge's discussion states Q3's finding and Q4's answer as its evidence
ANSWERS_ANOTHER_TOO = {("q3", "challenge"), ("q4", "challenge")}


@pytest.mark.parametrize("qid", WRITTEN_QUESTIONS)
def test_another_questions_answer_earns_at_most_half_marks(qid):
    answers = parse_answers(KEY.read_text(encoding="utf-8"))
    for other in WRITTEN_QUESTIONS:
        if other == qid or (qid, other) in ANSWERS_ANOTHER_TOO:
            continue
        result = grade_answer(qid, answers[other])
        assert result.score <= POINTS[qid] / 2, (other, result.output)


@pytest.mark.parametrize(
    "text",
    [
        "Each head gets an equal chunk of d_model/num_heads features.",
        "Head 0 split its attention between tokens 2 and 3, head 1 put its weight on token 4.",
        "num_heads must divide d_model exactly so the heads all get the same width.",
    ],
)
def test_a_word_of_the_finding_used_of_something_else_is_no_finding_in_q2(text):
    result = grade_answer("q2", text)
    assert result.score <= POINTS["q2"] / 2, result.output
