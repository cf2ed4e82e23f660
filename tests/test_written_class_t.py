"""Issue 21, set T seen: its misses handled as mechanisms, in words of their own, not the labelled
set's. The student refusing ownership of what the answer gives ("not mine", "not a view I hold",
arguing a side for the sake of it, "the answer I won't give"), or calling its source
untrustworthy ("those notes are unreliable", "I never check his working"), or putting it there
only to fill the space, unclaims the sentence it stands in (a quotation it introduces too) and
everything before it; and a quotation credited to someone else, which the student never
endorses, is that source's claim, not the student's."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q1 = "There is one Wq, Wk and Wv at full d_model, and Q, K and V are cut into equal chunks"
_Q2 = "The counts were equal, 256 and 256, because Wq, Wk, Wv and Wo stay d_model x d_model"
_Q5 = "d_model must be divisible by num_heads so that each head gets an equal share of features"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # ownership refused after the answer
        ("q1", f"{_Q1}. To be clear, that is not a view I share; I'm only arguing it."),
        ("q2", f"{_Q2}. This one is my flatmate's answer, not mine."),
        # a side argued for the sake of argument
        ("q5", f"Playing devil's advocate for the group: {_Q5}."),
        # the answer named and then refused
        ("q1", f"Most people write that {_Q1.lower()}; that's the answer I'm not going to give."),
        # the source called untrustworthy, before the answer it introduces
        ("q2", f"From a blog that is known to be unreliable, so take it as you like: '{_Q2}.'"),
        ("q5", f"My partner's summary (I never check his working): '{_Q5}.'"),
        # only to fill the space
        ("q1", f"Putting this here so the box isn't blank: {_Q1}."),
    ],
)
def test_refused_ownership_or_an_untrusted_source_unclaims_the_answer(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


def test_a_view_the_student_holds_is_still_theirs():
    share, flagged, _ = _graded("q1", f"{_Q1}. That is the position I hold, and my shapes agree.")
    assert share == 1.0 and not flagged


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q2", f"My roommate sent me this last night: '{_Q2}.'"),
        ("q5", f'A line from a stranger\'s post on a forum: "{_Q5}."'),
        ("q1", f"Heard it at the bus stop from two seniors: '{_Q1}.' Not sure which course."),
    ],
)
def test_a_quotation_credited_to_someone_else_is_theirs_not_the_students(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


@pytest.mark.parametrize(
    "text",
    [
        # endorsed after it
        f"My roommate sent me this last night: '{_Q2}.' I agree, my run gave the same.",
        # agreed with as it is given
        f"As my tutor put it, '{_Q2}.'",
        # the student's own output quoted as evidence
        f"My notebook printed '{_Q2}.'",
    ],
)
def test_an_endorsed_or_own_quotation_stays_claimed(text):
    share, _, _ = _graded("q2", text)
    assert share == 1.0


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            f"{_Q2}. At run time, though, four heads burn double the compute of a single one.",
        ),
        (
            "q4",
            "Each head runs its own softmax over d_model/num_heads dimensions, and every extra "
            "head multiplies the compute of the layer.",
        ),
    ],
)
def test_compute_growing_with_heads_beside_the_right_ideas_halves_them(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.5


def test_the_head_count_said_to_divide_the_tokens_too_halves_the_constraint():
    share, _, _ = _graded(
        "q5", f"{_Q5}. The head count also has to divide the number of tokens in the input."
    )
    assert share == 0.5


def test_candidates_left_undecided_are_not_claimed():
    share, _, _ = _graded(
        "q4",
        "Perhaps the number of softmaxes changes, or perhaps the width each one covers. I still "
        "can't make up my mind between the two.",
    )
    assert share == 0.0


def test_a_decision_reached_after_all_stays_the_students():
    share, _, _ = _graded(
        "q4",
        "Each head runs its own softmax over d_model/num_heads features. I could not decide at "
        "first, but my run settled it.",
    )
    assert share == 1.0


def test_a_tentative_it_would_seem_is_the_students_hedged_claim():
    share, _, _ = _graded(
        "q5",
        "It would appear that d_model must be divisible by num_heads, so each head gets an equal "
        "share of the features.",
    )
    assert share > 0.5


def test_how_it_would_seem_at_first_is_still_not_claimed():
    share, _, _ = _graded(
        "q1",
        f"It would seem at first that every head keeps its own Wq, but {_Q1[0].lower()}{_Q1[1:]}, "
        "so no head has its own matrices.",
    )
    assert share == 1.0


def test_a_claim_heard_elsewhere_and_never_checked_is_not_claimed():
    share, _, _ = _graded(
        "q2",
        f"Supposedly {_Q2[0].lower()}{_Q2[1:]}; read that in a group chat and never verified it.",
    )
    assert share == 0.0
