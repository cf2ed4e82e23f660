"""Issue 21, set U seen: its misses handled as mechanisms, in words of their own, not the labelled
set's. What a reader of the rendered Markdown sees (struck-out text withdrawn, an unticked box
asserting nothing); a line headed by doubt ("Not sure:"); a report left unverified (a rumour's
label, "could not confirm", "never verified a word of it", "or so I've heard, didn't check") and
a report the student checks or weighs and endorses; the student refusing to adopt or hand in
what the answer gives, or writing it only for the marks; a question fronted and left open; the
student's third-person "the student believes"; and the hedges of memory and knowledge."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q1 = "There is one Wq, Wk and Wv at full d_model, and Q, K and V are cut into equal chunks"
_Q2 = "The counts were equal, 256 and 256, because Wq, Wk, Wv and Wo stay d_model x d_model"
_Q4 = "Each head runs its own softmax, so h softmaxes instead of one, each over d_model/h dims"
_Q5 = "d_model must be divisible by num_heads so that each head gets an equal share of features"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # ownership refused: not adopted, not handed in as the answer, held back for the marks
        ("q5", f"A senior posted this in the group chat: '{_Q5}.' Popular; I'm not adopting it."),
        ("q1", f"My flatmate's notes read: '{_Q1}.' I'm not submitting her notes as my answer."),
        (
            "q2",
            f"What I would put if I only wanted the marks: '{_Q2}.' I'll keep my view to myself.",
        ),
        # never checked a word of it
        ("q4", f"Off a revision sheet from last year: '{_Q4}.' I have not checked a word of it."),
        # heard, and not checked
        ("q4", f"{_Q4}, or so I have been told, and I never verified it."),
        # a rumour's label, and the story left unverified
        ("q2", f"Unconfirmed: {_Q2}.\nStill unverified."),
    ],
)
def test_a_report_unadopted_or_unverified_is_not_the_students(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


@pytest.mark.parametrize(
    "text",
    [
        f"The paper claims: {_Q4}. We replicated this with our own shapes, (h, n, n).",
        f"A reviewer writes that {_Q4}. I find the argument persuasive.",
    ],
)
def test_a_report_the_student_checks_or_weighs_is_theirs(text):
    share, _, _ = _graded("q4", text)
    assert share == 1.0


def test_struck_out_text_is_withdrawn_and_its_replacement_claimed():
    share, _, _ = _graded("q5", f"~~num_heads must be a multiple of d_model.~~ {_Q5}.")
    assert share == 1.0
    share, _, _ = _graded("q5", f"~~{_Q5}.~~ Any head count works, it is rounded.")
    assert share == 0.0


def test_an_unticked_box_asserts_nothing_a_ticked_one_its_item():
    ticked, _, _ = _graded("q5", f"* [x] {_Q5}")
    unticked, _, _ = _graded("q5", f"* [ ] {_Q5}")
    assert ticked == 1.0 and unticked == 0.0


@pytest.mark.parametrize(
    "text",
    [
        f"Unsure: {_Q5}.",
        f"Sure of nothing here.\nNot entirely sure:\n- {_Q5}",
    ],
)
def test_a_line_headed_by_doubt_asserts_nothing(text):
    share, _, _ = _graded("q5", text)
    assert share == 0.0


def test_a_question_fronted_and_left_open_asserts_nothing():
    share, _, _ = _graded("q5", f"Whether {_Q5}, I could not say.")
    assert share == 0.0


def test_the_student_in_the_third_person_believing_is_a_hedge_not_a_report():
    share, _, out = _graded("q4", f"The writer believes that {_Q4[0].lower()}{_Q4[1:]}.")
    assert share == 1.0 and "guess" in out


@pytest.mark.parametrize(
    "opening",
    ["If memory serves me right,", "Unless I am mistaken,", "To the best of my knowledge,"],
)
def test_provisos_of_memory_and_knowledge_are_hedges(opening):
    share, _, out = _graded("q2", f"{opening} {_Q2[0].lower()}{_Q2[1:]}.")
    assert share == 1.0 and "guess" in out


_CHAT = "[09:14] Priya: " + _Q2 + "\n[09:15] me: {}"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes, I got the same when I counted", 1.0),
        ("not sure about that one, have to run", 0.0),
        ("hmm mine printed 512 for two heads", 0.0),
    ],
)
def test_in_a_chat_log_only_the_students_lines_and_what_they_agree_with_count(reply, expected):
    share, _, _ = _graded("q2", _CHAT.format(reply))
    assert share == expected


def test_a_dialogue_between_characters_counts_what_it_settles_on_not_its_questions():
    settled = (
        f"PUPIL: Does every head own a Wq?\nTEACHER: Count them.\nPUPIL: No. {_Q1}.\nTEACHER: Yes."
    )
    assert _graded("q1", settled)[0] == 1.0
    asked = (
        "PUPIL: Is there one Wq, Wk and Wv at full d_model, cut into equal chunks?\nTEACHER: Hm."
    )
    assert _graded("q1", asked)[0] == 0.0


def test_a_dialogue_put_off_for_later_settles_nothing():
    text = f"PUPIL: {_Q4}.\nTEACHER: Sleep on it and get back to me."
    assert _graded("q4", text)[0] == 0.0


def test_as_many_output_projections_as_heads_is_the_per_head_wo_misconception():
    text = (
        "The counts are not equal: 4 heads need 4 output projections. Still, one Wq, Wk and Wv "
        "stay d_model x d_model."
    )
    _, _, out = _graded("q2", text)
    assert "output projection of its own" in out


def test_a_quotation_labelled_with_its_source_is_annotated_not_claimed():
    text = f'"{_Q5}" (from the README). ✓ Noted.'
    assert _graded("q5", text)[0] == 0.0
    own = f'"{_Q5}" (from the README). ✓ My run: d_model 8 with 3 heads raised a ValueError.'
    assert _graded("q5", own)[0] < 1.0


def test_a_past_tense_mean_is_the_same_word():
    share, _, _ = _graded(
        "challenge", "Let no one say the same parameter count meant equal capability."
    )
    assert share > 0.0


@pytest.mark.parametrize("opening", ["If memory serves,", "As far as I know,", "Unless I'm wrong,"])
def test_a_proviso_opening_the_sentence_hedges_the_clause_after_its_comma(opening):
    share, _, out = _graded("q1", f"{opening} there is one Wq, Wk and Wv at full d_model.")
    assert "guess" in out


def test_a_check_that_finds_against_the_report_endorses_nothing():
    text = f"My lab partner says that {_Q1[0].lower()}{_Q1[1:]}. I checked this and it is not so."
    assert _graded("q1", text)[0] == 0.0
