"""How a written answer is read: terse sentences, misconceptions in prose, implied ideas, bare
yes/no answers, counterfactual clauses, other languages, and hints that never ask for what the
answer already says."""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, RubricError, grade_answer
from mha_grader.written.flags import OTHER_LANGUAGE, is_keyword_list
from mha_grader.written.language import other_language
from mha_grader.written.rubric import load_rubric, load_rubrics


def _share(qid: str, text: str) -> float:
    return grade_answer(qid, text).score / POINTS[qid]


# ------------------------------------------------------------------------- terse sentences
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q5", "num_heads divides d_model."),
        ("q5", "num_heads divides d_model"),
        ("q5", "d_model % num_heads == 0."),
        ("q2", "Same count, 256. Heads are just a reshape."),
        ("q4", "More softmaxes, each over a smaller d_head."),
        ("q1", "From one shared Wq/Wk/Wv, split per head. No own matrices."),
        ("q1", "no head owns private projection matrices, they share one set"),
        ("q3", "Different heads give different attention patterns."),
    ],
)
def test_a_terse_sentence_is_no_keyword_list(qid, text):
    assert not is_keyword_list(text)
    result = grade_answer(qid, text)
    assert NEEDS_REVIEW not in result.tags, result.output
    assert result.score >= 0.5 * POINTS[qid], result.output


@pytest.mark.parametrize(
    "text",
    [
        "d_model, num_heads, divisible, equal chunks",
        "Wq Wk Wv shared; split columns; heads",
        "different patterns heads subspace allclose False",
        "one softmax; several patterns lost; subspaces; parameters same",
    ],
)
def test_keywords_without_sentences_are_a_list(text):
    assert is_keyword_list(text)


@pytest.mark.parametrize(
    "text",
    [
        "No head owns private weights.",
        "Q, K and V are computed once and sliced per head. No head owns private weights.",
        "All heads share Wq, Wk and Wv; no head owns private weights.",
    ],
)
def test_no_head_owning_private_weights_is_not_a_contradiction(text):
    result = grade_answer("q1", text)
    assert NEEDS_REVIEW not in result.tags
    assert "Recognised:" in result.output and "whether a head has" in result.output
    assert "Re-check" not in result.output


# ------------------------------------------------------------------ misconceptions in prose
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q1", "Each head sees a different part of the sequence and projects it with Wq, Wk, Wv."),
        ("q3", "They differ because each head sees a different part of the sequence."),
        ("q4", "With more heads each head sees a different part of the sequence."),
        ("q4", "Each head processes a different subset of the tokens, so the sequence is split."),
        ("q4", "More heads means each head attends to fewer tokens, so attention is more local."),
        ("challenge", "It loses the ability to read the sentence in several pieces at once."),
    ],
)
def test_a_misconception_in_prose_earns_little_and_is_named(qid, text):
    result = grade_answer(qid, text)
    assert result.score <= 0.25 * POINTS[qid], result.output
    assert "Re-check what you say about" in result.output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "Heads do not split the sequence: one shared Wq, Wk, Wv, and each token's vector "
            "is split across the heads, d_head features each.",
        ),
        (
            "q4",
            "Each token's vector is cut into num_heads parts: more independent softmaxes, "
            "each over a smaller d_head.",
        ),
    ],
)
def test_splitting_each_tokens_features_is_no_misconception(qid, text):
    result = grade_answer(qid, text)
    assert "Re-check" not in result.output, result.output
    assert result.score >= 0.75 * POINTS[qid]


def test_a_misconception_costs_a_share_of_an_otherwise_right_answer():
    right = "There are more independent softmaxes, each on a smaller slice of d_model."
    wrong = right + " Each head also adds its own parameters."
    assert _share("q4", right) == 1
    assert 0.5 <= _share("q4", wrong) < 1


# ------------------------------------------------- what the answer implies and answers plainly
def test_an_idea_implied_by_two_others_counts():
    # no private matrices + a slice of Q, K, V each: the projection is shared
    text = "Each head takes a slice of Q, K and V; no head has matrices of its own."
    assert _share("q1", text) == 1


def test_a_bare_no_answers_a_yes_no_question():
    assert _share("q3", "No.") >= 0.5
    assert _share("q3", "Yes.") == 0
    assert "Re-check" in grade_answer("q3", "Yes.").output
    # "No difference" is no bare "no": it says the opposite
    assert _share("q3", "No difference between the heads.") == 0


def test_a_counterfactual_clause_states_the_reason():
    for text in [
        "d_model must be divisible by num_heads, otherwise the features can't be dealt out "
        "equally to the heads.",
        "d_model has to be divisible by num_heads. If not, you cannot split the features in "
        "equal parts for each head.",
    ]:
        result = grade_answer("q5", text)
        assert result.score == POINTS["q5"], result.output
        assert NEEDS_REVIEW not in result.tags


def test_a_required_idea_missing_hides_the_hint_for_what_depends_on_it():
    # the experiment is reported; only the plain answer is missing, so only its hint shows
    rubric = load_rubrics()["q3"]
    evidence = next(c for c in rubric.concepts if c.id == "evidence")
    differ = next(c for c in rubric.concepts if c.id == "differ")
    result = grade_answer("q3", "When I compared them, head 0 looked at tokens 2 and 3.")
    assert differ.hint in result.output
    assert evidence.hint not in result.output


# ---------------------------------------------------------------------- another language
@pytest.mark.parametrize(
    "text",
    [
        "d_model doit être divisible par num_heads, car chaque tête reçoit un morceau de même "
        "taille.",
        "d_model muss durch num_heads teilbar sein, damit jeder Kopf gleich viele Merkmale "
        "bekommt.",
        "d_model 必须能被 num_heads 整除，因为每个头分到相同大小的一块。",
        "Число голов должно делить d_model без остатка.",
    ],
)
def test_an_answer_in_another_language_goes_to_a_teacher_at_half_marks(text):
    assert other_language(text)
    result = grade_answer("q5", text)
    assert NEEDS_REVIEW in result.tags
    assert result.score == OTHER_LANGUAGE.cap * POINTS["q5"] > 0
    assert "language other than English" in result.output


@pytest.mark.parametrize(
    "text",
    [
        "d_model % num_heads == 0.",
        "The heads' patterns differ: a token's attention is its own, per head (a priori).",
        "Each head gets d_model / num_heads features, i.e. the same share, en bloc.",
    ],
)
def test_english_and_notation_are_not_another_language(text):
    assert not other_language(text)


# ------------------------------------------------------------------- the rubric format
def _rubric(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "q9.toml"
    path.write_text(
        'question = "q9"\n[[concept]]\nid = "a"\npoints = 1\nidea = "i"\nhint = "h"\n'
        'phrasings = ["same count"]\n' + body
    )
    return path


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[misconception]]\nid = "m"\npenalty = 2\nidea = "i"\nphrasings = ["x y"]\n', "0 to 1"),
        ('[[misconception]]\nid = "m"\nidea = "i"\nphrasings = ["x y"]\n', "needs id, penalty"),
        (
            '[[concept]]\nid = "b"\npoints = 1\nidea = "i"\nhint = "h"\nphrasings = ["x"]\n'
            'implied_by = [["nope"]]\n',
            "unknown",
        ),
        (
            '[[concept]]\nid = "b"\npoints = 1\nidea = "i"\nhint = "h"\nphrasings = ["x"]\n'
            'yes_no = "maybe"\n',
            "yes_no",
        ),
    ],
)
def test_rubric_mistakes_are_reported_with_their_place(tmp_path, body, message):
    with pytest.raises(RubricError, match=message):
        load_rubric(_rubric(tmp_path, body))


def test_a_guess_is_no_answer_to_a_yes_no_question_but_a_belief_is():
    assert _share("q3", "They might differ.") == 0
    assert _share("q3", "Not always the same; it depends on the weights.") == 0
    assert _share("q3", "I think they differ.") >= 0.5
    assert _share("q3", "They probably differ.") >= 0.5
    # elsewhere a hedge changes nothing: the ideas are stated
    assert (
        _share(
            "q5", "Maybe d_model must be divisible by num_heads, so each head gets an equal chunk."
        )
        == 1
    )


def test_a_hedge_beside_a_stated_idea_keeps_the_answer():
    # "maybe" over a real idea (the shared projection) still answers "does a head own one?"
    assert _share("q1", "Maybe from one projection that is shared by all heads.") >= 0.5


def test_a_contrast_after_a_comma_is_a_claim_of_its_own():
    text = "256 for both: the head split is a reshape, not new weights."
    result = grade_answer("q2", text)
    assert result.score == POINTS["q2"], result.output
