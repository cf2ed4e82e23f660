"""Issue 21, set G's held-out part seen: whole-sheet behaviours handled as classes, so that the
same student's other phrasings go right too. The copier's hand-out text in looser forms (passive,
clauses reordered, parts of several hand-out sentences remixed, a hand-out's question made a
statement), the gamer's disavowal frames and labelled keyword lists, and the heads-split-the-tokens
reason in other words. The examples are in words of their own, not the labelled sets'."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, grade_written


def _sheet(answers: dict[str, str]) -> str:
    parts = []
    for qid, text in answers.items():
        heading = "Challenge" if qid == "challenge" else qid.upper()
        parts.append(f"## {heading}\n\n> The question.\n\n{text}\n")
    return "\n".join(parts)


# ---------------------------------------------------------------- copied text in looser forms

LOOSE_COPIES = [
    # split_heads' docstring, clauses swapped and the verb in the passive
    (
        "q1",
        "The feature axis of Q, K and V is cut into num_heads equal chunks after multi-head "
        "attention has projected them once at full d_model.",
    ),
    # the public test's docstring, its parts put in another order
    (
        "q2",
        "Four d_model x d_model projections (Wq, Wk, Wv, Wo) are where the expected counts come "
        "from, the shapes alone, plus one bias of length d_model each when bias=True.",
    ),
    # the notebook's sentence on a non-divisor, in the passive
    (
        "q5",
        "Equal chunks cannot be made of the features by a head count that does not divide "
        "d_model, and parameter_counts should say so with a ValueError naming it.",
    ),
    # two places of the notebook remixed into one sentence
    (
        "q3",
        "Only the slice of features each head sees differs, with the same input and the same "
        "projections, and the module printed token 0's rows.",
    ),
    # split_heads' and attention's docstrings remixed
    (
        "q4",
        "Head h gets the h-th block of consecutive features of every token, and the scores are "
        "scaled by the square root of the key width per head, not d_model.",
    ),
]


@pytest.mark.parametrize(("qid", "text"), LOOSE_COPIES)
def test_hand_out_text_in_a_looser_form_earns_nothing_and_says_so(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0.0, output
    assert "copied from" in output


def test_a_hand_outs_question_made_a_statement_beside_a_copy_is_copied_too():
    share, _, output = _graded(
        "q4",
        "The same input with 4 heads, d_head = 2: every pair of heads does still differ. "
        "Random projections are enough for the heads to differ: nothing has been trained yet.",
    )
    assert share == 0.0, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "One shared Wq, Wk and Wv is applied once at full d_model, and the result is split "
            "into equal chunks, one per head, so no head has its own matrices.",
        ),
        (
            "q4",
            "With more heads there are more independent softmaxes, and each one works over a "
            "smaller subspace of d_model/num_heads features.",
        ),
        (
            "q2",
            "Both were 256: the four projections Wq, Wk, Wv and Wo are d_model x d_model whatever "
            "the number of heads, so splitting adds nothing.",
        ),
    ],
)
def test_an_answer_of_ones_own_in_the_modules_vocabulary_is_no_copy(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output
    assert "copied" not in output


def test_a_sheet_of_loose_copies_earns_at_most_a_quarter_of_the_written_points():
    results = grade_written(_sheet(dict(LOOSE_COPIES)))
    earned = sum(r.score for r in results if NEEDS_REVIEW not in r.tags)
    assert earned <= 0.25 * sum(POINTS[r.question] for r in results)


# ------------------------------------------------------------------------ disavowal frames

DISAVOWED = [
    (
        "q3",
        "Nobody could reasonably claim that head 0 went to tokens 2 and 3 and head 1 to token 4.",
    ),
    ("q2", "It is absurd to think the count stays 256 for both heads."),
    ("q2", "It's laughable to claim the count is the same, 256 for one head and for two."),
    (
        "q3",
        "You would have to be confused to think head 0 attends to tokens 2 and 3 and head 1 to "
        "token 4.",
    ),
    (
        "q1",
        "Only someone who skipped the lab would think there is one shared Wq, Wk, Wv at full "
        "d_model.",
    ),
    (
        "q3",
        "There is no way the heads differ, with head 0 on tokens 2 and 3 and head 1 on token 4.",
    ),
    ("q5", "I refuse to accept that d_model has to be divisible by num_heads."),
    ("q5", "No sensible person would say that num_heads must divide d_model."),
]


@pytest.mark.parametrize(("qid", "text"), DISAVOWED)
def test_a_right_idea_in_a_disavowal_frame_earns_nothing(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0.0, output


def test_a_sheet_of_disavowal_frames_earns_at_most_a_quarter_or_goes_to_a_teacher():
    results = grade_written(_sheet(dict(DISAVOWED[:3] + DISAVOWED[4:5] + DISAVOWED[6:7])))
    earned = sum(r.score for r in results if NEEDS_REVIEW not in r.tags)
    assert earned <= 0.25 * sum(POINTS[r.question] for r in results)


def test_no_way_to_do_something_is_the_students_own_reason_not_a_disavowal():
    share, flagged, output = _graded(
        "q5",
        "There is no way to split 8 features into 3 equal heads, so d_model must be divisible "
        "by num_heads.",
    )
    assert share == 1.0 and not flagged, output


def test_no_way_the_heads_are_the_same_says_they_differ():
    share, flagged, output = _graded(
        "q3", "There is no way the heads are the same: head 0 went to tokens 2 and 3, head 1 to 4."
    )
    assert share == 1.0 and not flagged, output


# -------------------------------------------------------------------------- keyword lists


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "challenge",
            "Key words: one softmax serves every relationship, several patterns per token, "
            "independent subspaces, parameter count is not capability, capability.",
        ),
        ("q1", "Key terms - shared Wq/Wk/Wv, full d_model, split afterwards, no per-head matrices"),
        ("q2", "Buzzwords: same count, 256, reshape, d_model x d_model, no extra parameters"),
        ("q4", "softmax count / independent / smaller subspace / d_model over num_heads"),
    ],
)
def test_a_list_the_student_labels_keywords_or_slashes_apart_goes_to_a_teacher_at_a_quarter(
    qid, text
):
    share, flagged, output = _graded(qid, text)
    assert flagged and share <= 0.25, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q5", "h | d_model. Equal chunks."),
        ("q4", "h softmaxes / each over d_model/h dims"),
    ],
)
def test_notation_with_a_bar_or_a_slash_is_no_keyword_list(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


# ------------------------------------------------------------- heads split the tokens


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q2", "Still 256: the heads partition the sequence, they do not add matrices."),
        ("q2", "Same, 256, since the heads just share out the words, no new weights."),
        ("q3", "They differ because head 0 gets tokens 0-1 and head 1 gets tokens 2-4."),
    ],
)
def test_the_heads_sharing_out_the_tokens_is_charged_in_any_question(qid, text):
    share, _, output = _graded(qid, text)
    assert share <= 0.5, output
    assert "which part of the input each head works with" in output


@pytest.mark.parametrize(
    "text",
    [
        "No; head 0 split between tokens 2 and 3, head 1 went fully to 4.",
        "No. Head 0 splits its weight over tokens 2 and 3, head 1 gives token 4 everything.",
    ],
)
def test_a_head_splitting_its_attention_between_tokens_is_the_evidence(text):
    share, flagged, output = _graded("q3", text)
    assert share == 1.0 and not flagged, output
