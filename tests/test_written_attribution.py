"""Attribution as grammar (issue 21): an idea whose clause has someone else for its subject and a
verb of saying or believing, "according to" a source, or hearsay, is reported, whatever the
words; the course's material as that subject is cited; an endorsement afterwards makes it the
student's; "otherwise" after a verb ("my run said otherwise") is no constraint's consequence."""

from __future__ import annotations

import pytest
from written_support import share as _share
from written_support import word_frames

from mha_grader.written.stance import Frame


def _frames(text: str, qid: str = "q5") -> list[dict[str, Frame]]:
    return word_frames(text, qid)


@pytest.mark.parametrize(
    "text",
    [
        "My neighbour's kid, who studies ML, swears the heads share projections.",
        "Some dude on Reddit reckons the heads share projections.",
        "The woman next to me in class insists the heads share projections.",
        "A commenter on YouTube has always maintained that the heads share projections.",
        "Critics of the change contend that the heads share projections.",
        "Everybody in the thread seems to believe the heads share projections.",
        "My tutor keeps insisting the heads share projections.",
        "According to a podcast I half listened to, the heads share projections.",
        "Allegedly the heads share projections.",
        "Word in the lab is that the heads share projections.",
        "The consensus among my classmates is that the heads share projections.",
        "It is tempting to assume the heads share projections.",
        "My flatmate's view is that the heads share projections.",
        "My TA's answer was that the heads share projections.",
        "Last year's solutions say the heads share projections.",
        "My study group concluded that the heads share projections.",
        "I saw on StackOverflow that the heads share projections.",
        "My TA: the heads share projections.",
        "The heads share projections, says my TA, because the count stays put.",
        "In my TA's words, the heads share projections.",
    ],
)
def test_an_idea_whose_subject_is_someone_else_saying_it_is_reported(text):
    assert _frames(text)[0]["share"] is Frame.REPORTED


@pytest.mark.parametrize(
    "text",
    [
        "I saw in my run that the heads share projections.",
        "We concluded that the heads share projections.",
        "My answer: the heads share projections.",
        "In my own words, the heads share projections.",
        "My run: the heads share projections.",
    ],
)
def test_the_students_own_sources_and_words_are_asserted(text):
    assert _frames(text)[0]["share"] is Frame.ASSERTED


def test_what_the_student_was_taught_is_cited():
    assert _frames("I was taught that the heads share projections.")[0]["share"] is Frame.CITED


@pytest.mark.parametrize(
    "text",
    [
        "The lecture slides mention that the heads share projections.",
        "My notes from the tutorial say the heads share projections.",
        "According to the module, the heads share projections.",
        "Per the slides, the heads share projections.",
    ],
)
def test_the_course_material_as_that_subject_is_cited(text):
    assert _frames(text)[0]["share"] is Frame.CITED


def test_a_verb_of_belief_reports_only_after_someone_else_as_its_subject():
    assert _frames("My housemate reckons the heads share projections.")[0]["share"] is (
        Frame.REPORTED
    )
    for own in (
        "I reckon the heads share projections.",
        "The heads share projections.",
        "According to my run, the heads share projections.",
        "It is wrong to think the heads share projections.",
    ):
        assert _frames(own)[0]["share"] is not Frame.REPORTED, own


def test_a_whole_answer_credited_to_a_friend_in_new_words_earns_nothing():
    text = (
        "My housemate reckons d_model has to be divisible by num_heads so that each head gets "
        "an equal chunk. I think any head count below d_model would do."
    )
    assert _share("q5", text) <= 0.25


RIGHT = (
    "d_model has to be divisible by num_heads so that each head gets an equal chunk of "
    "d_model/num_heads features"
)


@pytest.mark.parametrize(
    "text",
    [
        f"A friend told me {RIGHT}, and she is right.",
        f"Some people claim {RIGHT}, and I agree with them.",
        f"A friend told me {RIGHT}, and my own run confirmed it.",
        f"A friend told me {RIGHT}. My own run confirmed it.",
        f"They reckon {RIGHT}, and I think that's right.",
    ],
)
def test_a_report_the_student_then_endorses_is_credited(text):
    assert _share("q5", text) >= 0.75


def test_otherwise_after_a_verb_of_saying_opens_no_consequence():
    frames = _frames("My run said otherwise when I tried 3 heads, the last head got the leftovers.")
    assert frames[0]["leftovers"] is not Frame.OTHERWISE
    # after a requirement it still does
    frames = _frames("d_model must be divisible by num_heads, otherwise the heads get leftovers.")
    assert frames[0]["leftovers"] is Frame.OTHERWISE


# ------------------------------------------------- a wrong idea in the right words (rubrics)
def test_divisible_by_the_head_count_squared_is_no_credit_for_the_constraint():
    text = "d_model has to be a multiple of num_heads squared, so each head's block is square."
    assert _share("q5", text) <= 0.25


@pytest.mark.parametrize(
    "text",
    [
        "d_model must be divisible by 2*num_heads, because queries and keys each need half.",
        "d_model has to be a multiple of 2 x num_heads so every head is even.",
        "d_model must be divisible by num_heads * 2.",
    ],
)
def test_divisible_by_a_multiple_of_the_head_count_in_numbers_is_no_credit(text):
    assert _share("q5", text) <= 0.25


def test_a_number_divisible_by_a_head_count_is_no_wrong_multiple():
    text = "d_model must be divisible by num_heads, e.g. 512 is divisible by 8 heads, so each "
    text += "head gets an equal chunk."
    assert _share("q5", text) == 1


def test_more_heads_making_d_model_grow_earns_no_credit():
    text = "Adding heads makes d_model grow, since every head brings d_head features of its own."
    assert _share("q4", text) <= 0.25


@pytest.mark.parametrize(
    "text",
    [
        "My TA said d_model must be divisible by num_heads so each head gets an equal chunk, "
        "and that's what I saw in the notebook too.",
        "A friend claims d_model must be divisible by num_heads so each head gets an equal "
        "chunk, which is exactly what I found.",
    ],
)
def test_a_report_the_students_own_finding_agrees_with_is_theirs(text):
    assert _share("q5", text) == 1


def test_the_course_material_the_students_own_finding_agrees_with_is_theirs():
    cited = "The lecture says both are 256 because the weights are d_model x d_model"
    assert _share("q2", cited + ".") == 0.5
    assert _share("q2", cited + ", which is true.") == 0.5  # agreeing is no finding
    assert _share("q2", cited + ", which is what I got as well.") == 1


@pytest.mark.parametrize(
    ("source", "expected"),
    [("my TA", 1), ("the professor in lecture 8", 1), ("the lecture notes", 0.5)],
)
def test_as_a_source_said_the_student_states_it(source, expected):
    verb = "says" if source.endswith("notes") else "said"
    claim = "d_model must be divisible by num_heads so each head gets an equal chunk."
    text = f"As {source} {verb}, {claim}"
    assert _share("q5", text) == expected
    assert _share("q5", "Like" + text[2:]) == expected


@pytest.mark.parametrize(
    ("opening", "expected"),
    [("According to the lecture slides", 0.5), ("According to my friend", 0)],
)
def test_what_follows_a_colon_spells_out_what_the_opening_source_says(opening, expected):
    text = (
        f"{opening}, each head does not have its own projection matrices: one shared Wq, Wk, Wv "
        "is computed at full d_model and split into chunks per head."
    )
    assert _share("q1", text) == expected
