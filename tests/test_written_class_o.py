"""Issue 21, set O seen: its misses handled as classes, in words of their own, not the labelled
set's: the student's disbelief as a whole sentence ("I'm not convinced.", "I have my doubts.")
or with a degree ("I'm not fully convinced; ...") disowns what they reported before it; "the
head count doesn't change the count" is the finding, not its reason; one count given for two
head counts is the finding; weights nothing of which depends on the head count are the reason;
"They do not." answers the question no; a part of the width in numbers ("4 of the 16
dimensions") is the smaller space; a softmax over the queries is charged in every question;
"Were this not the case, ..." is what would happen otherwise; "Why must X? Because ..." claims
X; what a call printed is its value, and its arguments' commas make no keyword list; a note's
question answered "None." is answered no; denying that a claim holds only at some time ("a
mistake to think they only differ after training") keeps the claim."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_REPORTED_Q2 = (
    "Our tutor told us the two counts come out identical, 256 and 256, because Wq, Wk, Wv and Wo "
    "stay d_model x d_model for every head count."
)


@pytest.mark.parametrize(
    "doubt",
    [
        "I'm not convinced.",
        "Not persuaded.",
        "I'm not entirely convinced.",
        "I have my doubts.",
        "I'm not fully convinced; the heads could add weights somewhere.",
    ],
)
def test_disbelief_after_a_reported_view_earns_it_nothing(doubt):
    share, _, _ = _graded("q2", f"{_REPORTED_Q2} {doubt}")
    assert share <= 0.25


def _recognised(output: str) -> str:
    return next((line for line in output.split("\n") if line.startswith("Recognised")), "")


_WHY = "why the number of heads does not change the count"
_FINDING = "what you found when you compared the two counts"


def test_the_head_count_not_changing_the_count_is_the_finding_not_its_reason():
    share, _, output = _graded(
        "q2",
        "I counted with 2 and with 4 heads at d_model = 8 and both gave 256, so the number of "
        "heads does not affect the parameter count.",
    )
    assert _FINDING in _recognised(output) and _WHY not in _recognised(output)
    assert share == 0.5


def test_the_reason_still_counts_when_the_head_count_leaves_the_shapes_alone():
    _, _, output = _graded(
        "q2",
        "Both gave 256. The number of heads does not change the shape of any of the four matrices.",
    )
    assert _WHY in _recognised(output)


@pytest.mark.parametrize(
    "counts",
    [
        "With d_model = 32 I got 4096 parameters with one head and 4096 with two heads.",
        "At d_model = 12: 576 for 1 head and also 576 for 3 heads.",
    ],
)
def test_one_count_given_for_two_head_counts_is_the_finding(counts):
    _, _, output = _graded("q2", counts)
    assert _FINDING in _recognised(output)


def test_two_different_counts_for_two_head_counts_are_no_finding_of_equality():
    _, _, output = _graded("q2", "I got 4096 parameters with one head and 8192 with two heads.")
    assert _FINDING not in _recognised(output)


@pytest.mark.parametrize(
    "reason",
    [
        "None of the four weight matrices depends on the head count.",
        "Wq is 8 x 8 and Wo is 8 x 8 either way.",
    ],
)
def test_weights_that_do_not_depend_on_the_head_count_are_the_reason(reason):
    _, _, output = _graded("q2", f"Two heads and one head both gave 256. {reason}")
    assert _WHY in _recognised(output)


_ROWS = (
    "For the first token, head 0 gave tokens 1 and 2 about 0.3 and 0.7 (in that order), whereas "
    "head 1 placed all of its weight on token 3."
)


@pytest.mark.parametrize("reply", ["They do not.", "They don't.", "They did not."])
def test_an_elliptic_reply_answers_the_question_no(reply):
    share, flagged, _ = _graded("q3", f"{reply} {_ROWS}")
    assert share == 1.0 and not flagged


def test_an_elliptic_yes_answers_the_question_yes():
    _, _, output = _graded("q3", "They do. Both heads put everything on token 3.")
    assert "goes against" in output


_SPACE = "the size of the space each head works in"


@pytest.mark.parametrize(
    "width",
    ["only 8 of the 32 dimensions", "16 out of 64 features", "2 of its 8 dimensions"],
)
def test_a_part_of_the_width_in_numbers_is_the_smaller_space(width):
    _, _, output = _graded(
        "q4", f"Each head runs a softmax of its own, and its scores use {width}."
    )
    assert _SPACE in _recognised(output)


def test_all_of_the_width_in_numbers_is_no_smaller_space():
    _, _, output = _graded("q4", "Each head runs a softmax of its own over 8 of the 8 dimensions.")
    assert _SPACE not in _recognised(output)


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "Each head has its own softmax now, over d_model/num_heads features, and that softmax "
            "runs along the queries, axis 0, so each key's column adds up to 1.",
        ),
        (
            "q3",
            "No, they differ: head 0 looks at tokens 2 and 3, head 1 at token 4, because each "
            "head's softmax runs across the queries.",
        ),
    ],
)
def test_a_softmax_over_the_queries_is_charged_wherever_it_appears(qid, text):
    share, flagged, output = _graded(qid, text)
    assert "which axis each softmax normalises over" in output
    assert flagged or share <= 0.5


def test_a_softmax_over_the_keys_for_each_query_is_no_charge():
    share, flagged, output = _graded(
        "q4",
        "Each head has its own softmax now, over d_model/num_heads features; for every query it "
        "normalises the scores over the keys, so each row adds up to 1.",
    )
    assert share == 1.0 and not flagged and "axis" not in output


@pytest.mark.parametrize("other_case", ["Were that not the case", "Were it not so", "Failing that"])
def test_the_case_without_a_requirement_in_words_reads_as_otherwise(other_case):
    share, flagged, _ = _graded(
        "q5",
        f"d_model is required to be a whole multiple of num_heads. {other_case}, the features "
        "could not be divided into num_heads slices of equal size d_model/num_heads.",
    )
    assert share == 1.0 and not flagged


_CONSTRAINT = "the constraint itself"


@pytest.mark.parametrize("opener", ["Because", "Since", "So that"])
def test_a_why_question_answered_at_once_takes_its_premise_as_the_students(opener):
    share, flagged, output = _graded(
        "q5",
        f"Why does num_heads have to divide d_model? {opener} every head then gets the same "
        "d_model/num_heads features.",
    )
    assert _CONSTRAINT in _recognised(output) and share == 1.0 and not flagged


def test_a_why_question_left_unanswered_or_hypothetical_claims_nothing():
    for text in (
        "Why does num_heads have to divide d_model?",
        "Why would num_heads have to divide d_model? Because someone said so, I guess.",
    ):
        _, _, output = _graded("q5", text)
        assert _CONSTRAINT not in _recognised(output)


_AGREE = "whether the heads' patterns for the same token agree"


@pytest.mark.parametrize("verb", ["printed", "showed", "prints"])
def test_what_a_call_printed_is_its_value(verb):
    _, _, output = _graded(
        "q3", f"For my seed, np.allclose(w[0], w[1]) {verb} False, head 0 and head 1 split apart."
    )
    assert _AGREE in _recognised(output)


def test_a_pasted_call_and_a_note_of_rows_are_no_keyword_list():
    share, flagged, _ = _graded(
        "q3",
        "`np.allclose(attn[0], attn[1])` printed False. First token: head 0 `[0.5, 0.5, 0, 0]`, "
        "head 1 `[0, 0, 0, 1]`.",
    )
    assert not flagged and share == 1.0


@pytest.mark.parametrize("reply", ["None.", "Zero.", "None at all."])
def test_a_notes_question_answered_with_none_is_answered_no(reply):
    share, flagged, output = _graded(
        "q1",
        "One Wq, Wk and Wv of size d_model x d_model project X once, and their outputs are cut "
        f"into num_heads equal slices, one per head. Separate weights for each head? {reply}",
    )
    assert share == 1.0 and not flagged and "goes against" not in output


def test_none_opening_a_claim_is_no_reply():
    share, _, output = _graded(
        "q1",
        "None of the heads shares anything: each head has its own Wq, Wk and Wv.",
    )
    assert "goes against" in output


_EVIDENCE = (
    "Already with random weights token 0 went to tokens 1 and 2 in head 0, to token 3 in head 1."
)


@pytest.mark.parametrize(
    "denial",
    [
        "It's a myth that the heads only differ once they are trained.",
        "A classic mistake is to think the heads just differ after training.",
    ],
)
def test_denying_that_a_claim_holds_only_at_some_time_keeps_the_claim(denial):
    share, flagged, output = _graded("q3", f"{denial} {_EVIDENCE}")
    assert share == 1.0 and not flagged and "goes against" not in output


def test_denying_the_claim_itself_still_denies_it():
    _, _, output = _graded("q3", "It's a myth that the heads differ after training.")
    assert _AGREE not in _recognised(output)
