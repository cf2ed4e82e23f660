"""Grading of the written answers: labelled regression set, acceptance rule, flags, feedback."""

from __future__ import annotations

import pytest

from mha_check.questions import WRITTEN_QUESTIONS
from mha_grader.outcomes import TestResult as Result  # aliased: pytest collects Test* names
from mha_grader.paths import EXERCISES, SOLUTIONS
from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, grade_answer, grade_written, needs_review
from mha_grader.written.agreement import DEFAULT_SET, Graded, grade_labelled, load_labelled, summary
from mha_grader.written.match import small_typo
from mha_grader.written.rubric import load_rubrics

HOLDOUT_SET = DEFAULT_SET.parent / "written_holdout.toml"
REGRESSION = load_labelled(DEFAULT_SET)
HOLDOUT = load_labelled(HOLDOUT_SET)
BLIND = load_labelled(DEFAULT_SET.parent / "written_blind.toml")
PARAPHRASE = load_labelled(DEFAULT_SET.parent / "written_paraphrase.toml")
# the first two held-out sets, no longer held out once their first runs were reported
HELDOUT_A = load_labelled(DEFAULT_SET.parent / "written_paraphrase_heldout.toml")
HELDOUT_B = load_labelled(DEFAULT_SET.parent / "written_paraphrase_heldout_b.toml")
# the third, measured once before any tuning that followed it and never tuned on since
HELDOUT_C = load_labelled(DEFAULT_SET.parent / "written_paraphrase_heldout_c.toml")
BAD_KINDS = {"wrong", "negated", "keywords", "offtopic", "empty", "placeholder", "reversed"}
# correct answers however they are worded: each gets most of its points without review
GOOD_KINDS = {"good", "unusual", "terse", "hedged"}


def tolerance(qid: str) -> float:
    return 0.25 * POINTS[qid]  # one point on a 4-point question, two on the challenge


@pytest.fixture(scope="module")
def regression() -> list[Graded]:
    return grade_labelled(REGRESSION)


@pytest.fixture(scope="module")
def holdout() -> list[Graded]:
    return grade_labelled(HOLDOUT)


@pytest.fixture(scope="module")
def blind() -> list[Graded]:
    return grade_labelled(BLIND)


@pytest.fixture(scope="module")
def paraphrase() -> list[Graded]:
    return grade_labelled(PARAPHRASE)


@pytest.fixture(scope="module")
def heldout_a() -> list[Graded]:
    return grade_labelled(HELDOUT_A)


@pytest.fixture(scope="module")
def heldout_b() -> list[Graded]:
    return grade_labelled(HELDOUT_B)


@pytest.fixture(scope="module")
def heldout_c() -> list[Graded]:
    return grade_labelled(HELDOUT_C)


def _ids(entries: list[dict]) -> list[str]:
    return [f"{e['question']}-{e['kind']}-{i}" for i, e in enumerate(entries)]


def test_regression_set_is_large_and_covers_every_question_and_kind():
    assert len(REGRESSION) >= 60
    assert {e["question"] for e in REGRESSION} == set(WRITTEN_QUESTIONS)
    kinds = {e["kind"] for e in REGRESSION}
    assert {"good", "partial", "wrong", "negated", "reversed", "keywords", "offtopic"} <= kinds
    assert {"placeholder", "empty", "contradictory", "long"} <= kinds


@pytest.mark.parametrize("index", range(len(REGRESSION)), ids=_ids(REGRESSION))
def test_regression_answer_gets_the_teachers_points(regression, index):
    g = regression[index]
    if g.expect_review:
        # contradictory or far too long: a teacher sets the score; the grader flags and caps it
        assert g.flagged, "a teacher expects this answer to be flagged needs-review"
        assert g.score <= 0.5 * POINTS[g.question]
    else:
        assert g.diff <= tolerance(g.question), f"teacher {g.label}, grader {g.score}"


SETS = ["regression", "holdout", "blind", "paraphrase", "heldout_a", "heldout_b"]


@pytest.mark.parametrize("sample", SETS)
def test_good_answers_get_three_quarters_without_review(request, sample):
    for g in request.getfixturevalue(sample):
        if g.kind in GOOD_KINDS and g.label == POINTS[g.question]:
            assert not g.flagged, g.text
            assert g.score >= 0.75 * POINTS[g.question], g.text


@pytest.mark.parametrize("sample", SETS)
def test_bad_answers_get_a_quarter_or_half_with_review(request, sample):
    for g in request.getfixturevalue(sample):
        if g.kind in BAD_KINDS:
            limit = 0.5 if g.flagged else 0.25
            assert g.score <= limit * POINTS[g.question], g.text
        if g.wrong_answer:  # at most a quarter of the points from the teacher
            assert g.score <= 0.5 * POINTS[g.question], g.text


@pytest.mark.parametrize("sample", [*SETS, "heldout_c"])
def test_the_grader_is_right_or_says_it_is_unsure(request, sample):
    """Within a quarter of the points of the teacher's mark or flagged for review: 95% at
    least, with at most 20% flagged, and no wrong answer above half marks."""
    figures = summary(request.getfixturevalue(sample))
    assert figures["right_or_flagged"] >= 0.95
    assert figures["flagged_share"] <= 0.20
    assert figures["max_wrong_share"] <= 0.5


def test_answers_in_another_language_are_flagged_never_zero(paraphrase):
    foreign = [g for g in paraphrase if g.kind == "foreign"]
    assert len(foreign) >= 5
    assert all(g.flagged and g.score > 0 for g in foreign)


def test_regression_agreement_with_the_teacher(regression):
    figures = summary(regression)
    assert figures["mean_abs_diff"] <= 0.5
    assert figures["within_1"] >= 0.9
    assert figures["within_1_unflagged"] >= 0.95


@pytest.mark.parametrize("sample", ["holdout", "blind"])
def test_agreement_on_answers_written_after_the_rubrics(request, sample):
    figures = summary(request.getfixturevalue(sample))
    assert figures["mean_abs_diff"] <= 0.6
    assert figures["within_1"] >= 0.8


def test_reference_answers_get_full_marks_without_review():
    results = grade_written((SOLUTIONS / "answers.md").read_text())
    assert [r.score for r in results] == [POINTS[q] for q in WRITTEN_QUESTIONS]
    assert not needs_review(results)


def test_results_follow_contract_order_names_and_points():
    results = grade_written((SOLUTIONS / "answers.md").read_text())
    assert [r.question for r in results] == list(WRITTEN_QUESTIONS)
    assert all(isinstance(r, Result) for r in results)
    assert all(r.name.startswith(f"{r.question}:") for r in results)
    assert [r.max_score for r in results] == [POINTS[q] for q in WRITTEN_QUESTIONS]


def test_template_answers_are_not_attempted():
    results = grade_written((EXERCISES / "answers.md").read_text())
    assert all(r.score == 0 for r in results)
    assert all("not attempted" in r.output for r in results)
    assert not needs_review(results)


def test_missing_answers_file_scores_zero_with_a_message():
    results = grade_written(None)
    assert [r.question for r in results] == list(WRITTEN_QUESTIONS)
    assert all(r.score == 0 and "answers.md is missing" in r.output for r in results)


def test_missing_section_costs_only_that_question():
    text = (SOLUTIONS / "answers.md").read_text().replace("## Q3", "## Notes")
    by_q = {r.question: r for r in grade_written(text)}
    assert by_q["q3"].score == 0 and "## Q3" in by_q["q3"].output
    assert all(by_q[q].score == POINTS[q] for q in WRITTEN_QUESTIONS if q != "q3")


def _score(qid: str, text: str) -> float:
    return grade_answer(qid, text).score


def test_negated_concept_counts_for_what_it_says():
    assert _score("q2", "The count is identical: splitting into heads does not add parameters.") > (
        _score("q2", "The count is identical: splitting into heads adds parameters.")
    )
    assert _score("q2", "Two heads add no extra parameters.") > 0
    assert _score("q2", "Two heads add extra parameters.") == 0


def test_reversed_divisibility_is_not_the_constraint():
    assert _score("q5", "d_model must be divisible by num_heads.") >= 3
    assert _score("q5", "num_heads must be divisible by d_model.") == 0
    assert _score("q5", "num_heads must divide d_model.") >= 3
    assert _score("q5", "d_model must divide num_heads.") == 0


def test_a_negation_after_the_claim_is_read_too():
    lost = "A single head loses the ability to attend to several relationships at once."
    kept = "The ability to attend to several relationships at once is not lost with a single head."
    assert _score("challenge", lost) > 0
    assert _score("challenge", kept) == 0


def test_word_order_of_a_passive_claim_is_understood():
    passive = (
        "Wq, Wk and Wv are shared by all heads; the projected Q, K and V are split into chunks."
    )
    assert _score("q1", passive) >= 3


@pytest.mark.parametrize(
    ("written", "meant", "same"),
    [
        ("indepedent", "independent", True),
        ("increses", "increases", True),
        ("atend", "attend", True),
        ("heap", "head", False),  # short words must be spelled right
        ("shape", "share", False),  # real words one letter apart are different words
        ("weight", "height", False),
    ],
)
def test_typo_tolerance_is_for_small_slips_in_longer_words(written, meant, same):
    assert small_typo(written, meant) is same


def test_small_typos_in_longer_words_are_tolerated():
    exact = _score("q4", "The number of independent softmax computations increases.")
    typo = _score("q4", "The number of indepndent softmax computations increses.")
    assert exact > 0 and typo == exact


def test_keyword_list_is_flagged_and_kept_low():
    result = grade_answer("q5", "d_model, num_heads, divisible, equal chunks, integer d_head")
    assert NEEDS_REVIEW in result.tags
    assert result.score <= 0.25 * POINTS["q5"]
    assert "a teacher will read" in result.output


def test_far_too_long_answer_is_flagged_and_never_gets_full_marks():
    good = "d_model must be divisible by num_heads, because each head gets an equal chunk. "
    result = grade_answer("q5", good * 12)
    assert NEEDS_REVIEW in result.tags
    assert result.score <= 0.5 * POINTS["q5"]


def test_contradictory_answer_is_flagged():
    result = grade_answer(
        "q5", "d_model must be divisible by num_heads. num_heads must be divisible by d_model."
    )
    assert NEEDS_REVIEW in result.tags
    assert result.score <= 0.5 * POINTS["q5"]
    assert "teacher" in result.output


def test_pasted_question_earns_nothing():
    question = "Does each head have its own projection matrices? Where do they come from?"
    assert _score("q1", question) == 0


def test_hints_alone_do_not_earn_the_points():
    # the feedback a student sees, pasted back as an answer, must not be worth much
    for qid, rubric in load_rubrics().items():
        hints = " ".join(c.hint for c in rubric.concepts)
        assert _score(qid, hints) <= 0.25 * POINTS[qid], qid


def test_feedback_names_recognised_ideas_and_hints_at_missing_ones():
    result = grade_answer("q5", "d_model has to be divisible by num_heads.")
    rubric = load_rubrics()["q5"]
    recognised, missing = rubric.concepts[0], rubric.concepts[1]
    assert f"Recognised: {recognised.idea}" in result.output
    assert missing.hint in result.output


def test_needs_review_is_true_when_any_result_is_tagged():
    clean = [Result("q1: written answer", "q1", 4, 4)]
    flagged = [*clean, Result("q2: written answer", "q2", 1, 4, tags=[NEEDS_REVIEW])]
    assert not needs_review(clean)
    assert needs_review(flagged)


def test_the_third_held_out_set_holds_every_kind_asked_for():
    assert len(HELDOUT_C) >= 100
    assert {e["question"] for e in HELDOUT_C} == set(WRITTEN_QUESTIONS)
    kinds = {e["kind"] for e in HELDOUT_C}
    assert {
        "unusual",
        "terse",
        "hedged",
        "misconception",
        "foreign",
        "restate",
        "elsewhere",
    } <= kinds
    assert {"mixed", "long", "bullets", "latex", "copy", "notes"} <= kinds
    assert len({e["text"].split()[0] for e in HELDOUT_C if e["kind"] == "foreign"}) >= 3
