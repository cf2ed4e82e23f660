"""Issue 21, set J seen: its misses handled as classes, so that other phrasings of the same
behaviour go right too. What a contrast rejects ("not X but Y", "X rather than Y") is the
rejected side's; a concession ("while it might seem that X") is no claim; a question the
student answers ("Same pattern? Never in my runs.") is judged by its answer; a bare answer
word before a clause ("so no they're not the same") is the reply, not a negation; what breaks
without a constraint ("or it crashes", "raise an error when ... != 0") leaves the constraint
whole; an answer that only supposes earns nothing; a view given up ("I used to think X, but
now I see they don't") is denied by its short answer; code's notation is read; a long run of
words is a keyword list even with a notation's "to" in it; "not untrue", "anything but" are
one claim; the attention's scale is no head width. The examples are in words of their own,
not the labelled set's."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

from mha_grader.written.agreement import GradedSheet
from mha_grader.written.copies import find_copies
from mha_grader.written.rubric import load_rubrics

# ----------------------------------------------------------------- not X but Y, rather than


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "Not a private Wq per head but one shared projection at full d_model, cut into "
            "equal slices afterwards, one slice per head.",
        ),
        (
            "q5",
            "Not every head count works but only a divisor: num_heads has to divide d_model so "
            "that each head gets an equal chunk.",
        ),
    ],
)
def test_a_negation_before_but_rejects_the_other_side_not_the_claim(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


def test_no_longer_said_of_the_single_head_names_what_it_loses_not_how_heads_work():
    text = (
        "Eight independent softmaxes give each token eight patterns; with one head the layer can "
        "no longer keep several separate kinds of dependency apart."
    )
    _, _, output = _graded("challenge", text)
    assert "how the 8 heads differ from one big head: part" not in output, output


# ------------------------------------------------------------------------------ concessions


def test_how_things_might_look_in_a_concession_is_no_claim():
    text = (
        "It may look as if a second head needs weights of its own, but the totals are "
        "identical: 256 and 256, since every projection stays d_model x d_model."
    )
    share, flagged, output = _graded("q2", text)
    assert share == 1.0 and not flagged, output


# ---------------------------------------------------------------- questions the student answers


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "Identical weights in both heads for token 0? Not once with my seed. Head 0 spread "
            "its weight over tokens 1 and 2, head 1 put it on token 3.",
        ),
        (
            "q5",
            "Any number of heads? Nope. num_heads must divide d_model, so every head gets the "
            "same number of features.",
        ),
    ],
)
def test_a_question_answered_by_a_bare_no_in_more_words_is_denied(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


def test_not_sure_after_a_question_is_a_hedge_not_a_no():
    share, _, output = _graded("q2", "the same count? not sure why")
    assert share > 0, output


# -------------------------------------------------------------- a bare answer word in a clause


@pytest.mark.parametrize(
    "text",
    [
        "i printed both heads for token 0 and head 0 was on token 2 and head 1 on token 4 so no "
        "it is not the same pattern",
        "No they are not the same: head 0 is on token 2, head 1 on token 4.",
    ],
)
def test_a_no_typed_without_its_comma_before_a_clause_is_the_reply(text):
    share, flagged, output = _graded("q3", text)
    assert share == 1.0 and not flagged, output


def test_a_verbless_note_closed_by_no_denies_what_it_names():
    share, flagged, output = _graded("q2", "Extra weights for the second head no. 256 both times.")
    assert share >= 0.5 and not flagged, output
    assert "Re-check" not in output, output


# --------------------------------------------------- the constraint and what breaks without it


@pytest.mark.parametrize(
    "text",
    [
        "d_model must be divisible by num_heads or the reshape crashes.",
        "The layer raises an error when d_model % num_heads != 0, since every head needs an "
        "equal slice of the features.",
        "num_heads needs to divide d_model and if it does not divide the split breaks, because "
        "every head gets an equal chunk.",
        "d_model should divide by num_heads, each head get equal part.",
    ],
)
def test_the_constraint_beside_what_breaks_without_it_keeps_its_points(text):
    share, flagged, output = _graded("q5", text)
    assert share >= 0.75 and not flagged, output
    assert "Re-check" not in output, output


def test_a_remainder_that_does_not_split_into_equal_chunks_is_the_reason():
    text = "num_heads must divide d_model: 8 features cannot be cut into 3 equal chunks."
    share, flagged, output = _graded("q5", text)
    assert share == 1.0 and not flagged, output


# ---------------------------------------------------------------- an answer that only supposes


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "If each head works on its own part of the features, the heads would produce "
            "different patterns for the same token.",
        ),
        ("q5", "If num_heads divided d_model, every head would get an equal chunk."),
    ],
)
def test_an_answer_that_only_supposes_earns_nothing(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0, output


def test_a_conclusion_drawn_from_a_supposition_is_claimed():
    text = "If the heads gave the same pattern, the layer would be pointless, so they differ."
    share, _, output = _graded("q3", text)
    assert share > 0, output


# ------------------------------------------------------------------------ a view given up


def test_a_view_given_up_is_denied_by_its_short_answer():
    text = "I used to think both heads attend the same way, but now I see they do not."
    share, flagged, output = _graded("q3", text)
    assert share >= 0.5 and not flagged, output


def test_the_finding_in_words_two_hand_outs_share_is_no_copy():
    # half of it in the README's words, half in the notebook's: no hand-out holds it
    rubric = load_rubrics()["q3"]
    text = (
        "Before running it I assumed they would match, but for token 0 head 0 splits its "
        "attention between tokens 2 and 3 and head 1 sends all of it to token 4."
    )
    assert not find_copies(rubric, rubric.normaliser.sentences(text))
    share, _, output = _graded("q3", text)
    assert share == 1.0 and "copied" not in output, output


# ------------------------------------------------------------------------------ code notation


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q3", "`np.allclose(attn[0], attn[1])` returned False for the rows of token 1."),
        ("q3", "np.allclose(w[0][2], w[1][2]) == False"),
        ("q5", "`if d_model % h: raise ValueError`"),
        ("q2", "256 vs 256; no weight matrix has num_heads in it."),
    ],
)
def test_code_notation_states_the_finding(qid, text):
    share, _, output = _graded(qid, text)
    assert share >= 0.5, output


# ------------------------------------------------------------------------------ keyword salad


def test_a_long_run_of_words_with_a_notations_to_is_a_keyword_list():
    text = "heads subspaces softmaxes relationships capacity parameters != performance tokens"
    share, flagged, output = _graded("challenge", text)
    assert flagged and share <= 0.25, output


# ---------------------------------------------------------------------------- double negation


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q1", "It is not false that every head owns a private Wq, Wk and Wv."),
        ("q3", "The heads can't produce anything but the same pattern for a token."),
    ],
)
def test_two_negations_assert_the_misconception(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 0 and not flagged, output


# ------------------------------------------------------------------------ the question's topic


def test_the_attentions_scale_is_no_head_width():
    text = "Dividing the scores by the square root of d_k stops them from getting too large."
    share, _, output = _graded("q4", text)
    assert share == 0, output


def test_a_phrasing_does_not_reach_into_a_clause_with_a_subject_of_its_own():
    text = "Each head has its own copy of the matrices, and the softmax runs over all of d_model."
    _, _, output = _graded("q4", text)
    assert "how many attention computations there are" not in output, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "Both totals are 256, because the four projections stay d_model x d_model; each "
            "extra head only brings a learnable scale of its own.",
        ),
        (
            "challenge",
            "Eight independent softmaxes let a token hold several patterns at once, while one "
            "head has a smaller output matrix, which costs it parameters.",
        ),
    ],
)
def test_something_learned_per_head_is_a_parameter_it_adds(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share <= 0.5 or flagged, output
    assert "Re-check" in output, output


# --------------------------------------------------------------------------------- the sheets


def test_a_sheet_the_teacher_gave_full_marks_passes_when_graded_near_them():
    assert GradedSheet("twist", 28, 26, 28, 0, 6).passes
    assert not GradedSheet("twist", 28, 12, 28, 0, 3).passes
    # a sheet of disowned ideas is held to a quarter, or a person reads it
    assert not GradedSheet("disavowal", 0, 12, 28, 0, 3).passes
    assert GradedSheet("disavowal", 0, 12, 28, 12, 0).passes
