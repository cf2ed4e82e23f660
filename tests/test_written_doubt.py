"""Where the reading of a written answer is in doubt, a teacher decides: a wrong idea beside
right ones, a wrong idea that also reads as a right one, a bare yes/no the rest contradicts.
An answer whose only content is wrong is not in doubt: its penalty stands, unflagged."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

from mha_grader.written import grade_answer
from mha_grader.written.flags import CONTRADICTORY, MIXED, MIXED_PLAIN, UNSURE


# --------------------------------------------------------- a wrong idea beside right ones
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "They differ: head 0 attends to tokens 2 and 3, head 1 to token 4, because head 0 "
            "is only given the first half of the sentence.",
        ),
    ],
)
def test_a_wrong_idea_beside_right_ones_goes_to_a_teacher_at_half_marks(qid, text):
    share, flagged, output = _graded(qid, text)
    assert flagged and share <= 0.5
    assert MIXED.message in output and "Re-check" in output


def test_a_full_answer_beside_a_wrong_idea_of_its_own_is_halved_without_review():
    # every idea asked for, each in clauses apart from the wrong one: the reading is certain
    share, flagged, output = _graded(
        "q4",
        "There are more independent softmaxes, each on a smaller slice of d_model, and each "
        "head also adds parameters of its own.",
    )
    assert share == 0.5 and not flagged
    assert MIXED_PLAIN.message in output and "Re-check" in output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q4", "More heads add parameters, so the model is more powerful."),
        ("q3", "Each head is given its own window of neighbouring words."),
        ("q4", "Each head is one more attention pass on top of the previous one."),
    ],
)
def test_a_wrong_idea_alone_is_charged_without_review(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share <= 0.25 and not flagged
    assert "Re-check what you say about" in output


def test_a_wrong_idea_that_also_reads_as_a_right_one_goes_to_a_teacher():
    # "head 0 ... token(s), head 1 ..." is the evidence Q3 asks for, and "only sees the first
    # tokens" is the sequence split: which one the student means is for a teacher to say
    text = "They are different because head 0 only sees the first tokens and head 1 the last."
    share, flagged, output = _graded("q3", text)
    assert flagged and share <= 0.5
    assert UNSURE.message in output or MIXED.message in output


# ---------------------------------------------------- heads given a place in the sequence
@pytest.mark.parametrize(
    "text",
    [
        "Different: head 0 only attends within the first half of the sentence.",
        "Each head handles one eighth of the tokens.",
        "Every head is assigned its own window of neighbouring words.",
        "Each head gets the queries of its own stretch of the sequence.",
    ],
)
def test_a_head_given_a_place_in_the_sequence_is_the_sequence_misconception(text):
    assert "Re-check what you say about which part of the input" in grade_answer("q3", text).output


@pytest.mark.parametrize(
    "text",
    [
        "No. Head 0 put most of its weight on the last token, head 1 on tokens 2 and 3.",
        "Not the same: one head looked back at the start of the sentence, the other at the end.",
        "No: head 1 only looks at token 4, while head 0 splits its weight over tokens 2 and 3.",
    ],
)
def test_where_a_head_attends_is_evidence_not_the_misconception(text):
    share, flagged, output = _graded("q3", text)
    assert "Re-check" not in output, output
    assert share == 1 and not flagged


@pytest.mark.parametrize(
    "text",
    [
        "More heads means more attention steps applied one after the other.",
        "Each head refines the previous head's output.",
        "The heads are stacked attention steps.",
    ],
)
def test_heads_run_one_after_another_is_a_misconception(text):
    assert "how the heads are arranged" in grade_answer("q4", text).output


def test_stacked_matrices_are_no_heads_in_series():
    text = (
        "in_proj_weight holds Wq, Wk and Wv stacked on top of each other; all heads share these "
        "projections and take slices of the projected Q, K and V."
    )
    share, flagged, output = _graded("q1", text)
    assert "Re-check" not in output and not flagged and share >= 0.75


# ------------------------------------------------------------- yes/no against the rest
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q3", "Yes. The heads look at different tokens: head 0 at token 2, head 1 at token 4."),
        ("q3", "Yes, identical; the heads only differ in what values they output."),
        ("q1", "Yes. All heads use the one Wq, Wk, Wv and each head takes a chunk of Q, K, V."),
    ],
)
def test_a_bare_yes_or_no_against_the_rest_of_the_answer_goes_to_a_teacher(qid, text):
    share, flagged, output = _graded(qid, text)
    assert flagged and share <= 0.5
    assert CONTRADICTORY.message in output


def test_a_bare_no_that_agrees_with_the_rest_is_no_contradiction():
    share, flagged, _ = _graded("q3", "No. Head 0 attends to token 2, head 1 to token 4.")
    assert share == 1 and not flagged


def test_a_right_and_a_contradicted_idea_are_flagged_whatever_the_net():
    text = "Both gave 256, because each head has its own Wq, Wk and Wv."
    share, flagged, output = _graded("q2", text)
    assert flagged and share <= 0.5
    assert CONTRADICTORY.message in output


# ------------------------------------------------ a wrong claim is read inside one clause
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "Both modules reported 256 parameters, so adding a second head cost nothing. The "
            "matrices stay d_model x d_model whatever num_heads is.",
        ),
        (
            "q2",
            "Both gave 256: the heads only split up the output of the same projections rather "
            "than having extra weights.",
        ),
        (
            "q1",
            "If I'm not mistaken, all heads use the same Wq, Wk and Wv computed once, and each "
            "one gets a slice of the result.",
        ),
        (
            "q5",
            "d_model must be a multiple of num_heads; otherwise d_model/num_heads is not a whole "
            "number and the features can't be shared out equally between heads.",
        ),
        (
            "q1",
            "One big Q is computed by a single Wq and sliced per head. Nobody gets a personal Wq.",
        ),
        (
            "q1",
            "The input goes through one query map, one key map and one value map at full width, "
            "and the heads divide those features. No matrix belongs to a single head.",
        ),
    ],
)
def test_right_answers_are_not_read_as_contradicting_themselves(qid, text):
    share, flagged, output = _graded(qid, text)
    assert not flagged and "Re-check" not in output, output
    assert share >= 0.75


@pytest.mark.parametrize(
    ("qid", "text", "least"),
    [
        ("q2", "No change.", 0.5),
        ("q2", "It never changes.", 0.5),
        ("q2", "No difference at all.", 0.5),
    ],
)
def test_any_negation_reads_a_phrasing_written_with_not(qid, text, least):
    assert _graded(qid, text)[0] >= least


def test_the_reason_alone_is_not_the_finding():
    # "the same shape" is why the count does not change; the count itself is not stated
    share, _, output = _graded("q2", "Wq, Wk, Wv and Wo keep the same shape whatever num_heads is.")
    assert share == 0.5
    assert "State plainly what the two parameter counts were" in output


@pytest.mark.parametrize(
    "text",
    [
        "I'm not convinced anything changes; the heads might just compute the same thing in "
        "smaller pieces.",
        "I doubt much changes, the heads could just be doing one softmax in smaller subspaces.",
    ],
)
def test_a_possibility_offered_beside_a_doubt_is_no_finding(text):
    assert grade_answer("q4", text).score == 0


def test_a_possibility_the_student_states_without_doubting_still_counts():
    text = "More heads might mean more softmaxes, each over a smaller d_model/h subspace."
    assert grade_answer("q4", text).score > 0
