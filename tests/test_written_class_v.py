"""Issue 21, set V seen: its misses handled as mechanisms, in words of their own, not the labelled
set's. A hand-out sentence reworded with a thesaurus is still copied; a report the student
passes on without taking it on, a tool's output not stood behind, too little followed to agree,
an answer withheld; JSON-like records read as notes; first-person role-play of a part; SOAP
notes, meeting minutes, a "(disputed)" sense, a condition whose premise is unestablished, a
diary ending unsettled, a multiple choice circled or left undecided; a devil's case answered "in
earnest"; a difference put down to noise, outputs averaged into one, one head needing a fraction
of the compute; a self-mark calling the answer a guess; voice dictation; an ELI5 image; one count
"either way" or "whether with one head or two"."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q1 = "There is one Wq, Wk and Wv at full d_model, and Q, K and V are cut into equal chunks"
_Q2 = "The counts were equal, 256 and 256, because Wq, Wk, Wv and Wo stay d_model x d_model"
_Q4 = "Each head runs its own softmax, so h softmaxes instead of one, each over d_model/h dims"
_Q5 = "d_model must be divisible by num_heads so that each head gets an equal share of features"
_CHALLENGE = (
    "Equal parameters do not mean equal capability: eight heads run eight independent softmaxes "
    "over smaller subspaces, so one token can hold several patterns in one layer, while a single "
    "head forces one softmax to serve every relationship"
)


def test_a_hand_out_sentence_with_synonyms_swapped_in_is_copied():
    text = (
        "Q, K and V get projected a single time at full d_model, and then the feature axis is cut "
        "into num_heads equal chunks: one for every head, each head receiving the h-th block of "
        "consecutive features."
    )
    share, _, _ = _graded("q1", text)
    assert share == 0.0


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            f"A poster at the meetup read: '{_Q4}.' Interesting; I am only relaying it, not taking "
            "it on.",
        ),
        (
            "q2",
            f"An autocorrect tool rewrote my notes as: '{_Q2}.' I do not stand behind what came "
            "out.",
        ),
        ("q1", f"Had I opened the notebook, I'd say: '{_Q1}.' I didn't, so I'm not saying it."),
    ],
)
def test_a_report_not_taken_on_is_not_the_students(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


def test_a_json_like_record_is_read_as_notes():
    record = (
        '{"constraint": "d_model divisible by num_heads", "why": "every head needs an equal share '
        'of the d_model features", "confidence": "high"}'
    )
    share, _, _ = _graded("q5", record)
    assert share == 1.0


def test_role_play_of_a_part_says_what_the_part_does():
    text = (
        "I'm the softmax. A one-head layer has one of me, over all d_model features. Give it h "
        "heads and there are h of me, each independent, each over d_model/h features."
    )
    share, _, _ = _graded("q4", text)
    assert share == 1.0


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # a SOAP note: the feeling beforehand and the plan are no claims, the verdict deferred
        ("q2", f"S: hunch that {_Q2}.\nO: nothing run.\nA: pending a run.\nP: {_Q2}, to check."),
        # meeting minutes: only noted, an action
        ("q1", f"AGREED: nothing.\nNOTED (no consensus): {_Q1}.\nACTION: Priya checks it."),
        # a sense labelled contested
        ("q4", f"softmax count (n.): {_Q4} (contested)."),
        # a condition whose premise the student could not establish
        ("q5", f"If {_Q5}, then it must hold - but we could not work out whether that is so."),
        # a diary that ends unsettled
        ("q3", "09:10 - the heads look different?\n09:40 - Ana says same.\n10:00 - no clue now."),
        # a multiple choice left undecided
        ("q4", f"(a) {_Q4};\n(b) the number of parameters.\n-> (a) or (b), can't decide."),
    ],
)
def test_what_is_only_felt_noted_contested_supposed_or_undecided_is_not_claimed(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


def test_a_circled_option_is_claimed_and_the_others_are_not():
    text = "(a) num_heads divisible by d_model;\n(b) " + _Q5 + ";\n(c) none.\n-> (b)"
    share, flagged, _ = _graded("q5", text)
    assert share == 1.0 and not flagged


def test_a_devils_question_answered_in_earnest_is_denied():
    text = (
        "Devil's advocate: one input, one set of weights, so surely every head attends alike? In "
        "earnest, they don't: token 0 in head 0 went to tokens 2 and 3 (0.42 and 0.58 in my "
        "seed-3 run), in head 1 wholly to token 4."
    )
    share, _, _ = _graded("q3", text)
    assert share == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "They attend to the same tokens; the small difference is floating-point noise.",
        "Only the decimals differ, and that difference is but rounding.",
    ],
)
def test_a_difference_put_down_to_noise_is_the_same_pattern(text):
    share, _, _ = _graded("q3", text)
    assert share == 0.0


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q4", f"{_Q4}; in the end their outputs get averaged together into one vector."),
        ("challenge", f"{_CHALLENGE}.[1]\n[1] and one head needs 4x less compute, a real saving."),
    ],
)
def test_a_misconception_beside_right_ideas_halves_them(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.5


def test_a_self_mark_calling_the_answer_a_guess_counts_half():
    share, _, output = _graded("q5", f"{_Q5}. (Self-mark: 2/4, pure guess, my code never ran.)")
    assert share == 0.5
    assert "guess" in output


def test_dictation_is_read_through():
    text = (
        "there are h soft maxes now comma one for each head comma each over d_model/h dimensions "
        "instead of d_model full stop"
    )
    share, _, _ = _graded("q4", text)
    assert share == 1.0


def test_an_eli5_image_alone_maps_nothing():
    share, _, _ = _graded(
        "q1",
        "ELI5: one big printing press everyone shares, then each page is cut into equal strips, "
        "one strip per kid.",
    )
    assert share == 0.0
    share, _, _ = _graded(
        "q1", f"ELI5: one big stamp everyone shares. For grown-ups: {_Q1}, and no head has its own."
    )
    assert share == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "The module holds 256 parameters either way; Wq, Wk, Wv and Wo are d_model x d_model.",
        "256, whether with one head or with two, since Wq, Wk, Wv and Wo are d_model x d_model.",
    ],
)
def test_one_count_either_way_is_the_same_count(text):
    share, _, _ = _graded("q2", text)
    assert share == 1.0


def test_a_verse_written_inline_runs_on_across_its_line_breaks():
    text = (
        "Our d_model must be divisible / by num_heads, so each head / gets an equal share of "
        "features."
    )
    share, _, _ = _graded("q5", text)
    assert share == 1.0
