"""Issue 21, set P seen: its misses handled as classes, in words of their own, not the labelled
set's: the student declining to vouch for what came before ("I can't confirm it.", "I'd want
to see it on more seeds before believing it") leaves it unclaimed; what "the rumour was" is
hearsay, as what it "is"; a condition that a source is right ("if the slides are right, ...")
makes what follows the source's, supposed, even in the indicative."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q2 = (
    "Both layers have 256 parameters, the same count, because Wq, Wk, Wv and Wo keep their "
    "d_model x d_model shape for every head count."
)


@pytest.mark.parametrize(
    "refusal",
    [
        "I can't confirm it.",
        "That's what my lab partner told me; I haven't verified that myself.",
        "My notebook crashed, so I could not check it.",
        "I would need to see it in my own run before believing it.",
    ],
)
def test_declining_to_vouch_for_the_sentence_before_earns_it_nothing(refusal):
    share, _, _ = _graded("q2", f"{_Q2} {refusal}")
    assert share <= 0.25


def test_declining_to_vouch_in_the_same_sentence_earns_it_nothing():
    share, _, _ = _graded("q2", f"{_Q2[:-1]}, but I never managed to verify that.")
    assert share <= 0.25


def test_a_finding_the_student_checked_still_counts():
    share, _, _ = _graded("q2", f"{_Q2} I checked it in my notebook.")
    assert share == 1.0


@pytest.mark.parametrize("was", ["is", "was"])
def test_what_the_rumour_was_is_hearsay(was):
    share, _, _ = _graded(
        "q3",
        f"The rumour around the lab {was} that for token 0 head 0 looked at tokens 2 and 3 "
        "while head 1 looked at token 4.",
    )
    assert share <= 0.25


_Q4 = (
    "more heads mean more separate softmaxes, one per head, each over d_model/num_heads "
    "dimensions instead of all of d_model."
)


@pytest.mark.parametrize(
    "condition",
    [
        "If the lecture slides are right",
        "If my classmates are correct",
        "If the textbook is to be believed",
        "If we trust the notes",
    ],
)
def test_a_condition_that_a_source_is_right_supposes_what_follows(condition):
    share, _, _ = _graded("q4", f"{condition}, {_Q4}")
    assert share <= 0.25


@pytest.mark.parametrize("condition", ["If my count is right", "If I'm right"])
def test_a_condition_on_the_students_own_result_stays_their_claim(condition):
    share, _, _ = _graded("q4", f"{condition}, {_Q4}")
    assert share >= 0.75


_CHALLENGE = (
    "one head loses the ability to hold several attention patterns for one token at once, "
    "because eight heads are eight independent softmaxes over smaller subspaces while a single "
    "head must fit every relationship into one softmax."
)


@pytest.mark.parametrize("subject", ["My roommate Tariq says", "Our TA Marguerite says"])
def test_a_person_named_after_their_role_reports_what_they_say(subject):
    share, _, _ = _graded("challenge", f"{subject} {_CHALLENGE} I can't judge it.")
    assert share <= 0.25


@pytest.mark.parametrize(
    "unsure",
    ["I can't tell whether he's right.", "We don't know enough to judge if that is true."],
)
def test_not_knowing_whether_a_report_is_true_leaves_it_unclaimed(unsure):
    share, _, _ = _graded("challenge", f"The lecture notes say that {_CHALLENGE} {unsure}")
    assert share <= 0.25


@pytest.mark.parametrize(
    "restated",
    [
        "parameter_counts raises a ValueError naming the offending head count when some h does "
        "not divide d_model, because the features can't be split evenly.",
        "multi_head_attention raises ValueError when d_model % num_heads != 0 (the heads must be "
        "chunks of an equal size).",
    ],
)
def test_a_docstrings_raises_entry_restated_as_a_sentence_is_copied(restated):
    share, _, output = _graded("q5", restated)
    assert share <= 0.25
    assert "docstrings" in output


def test_the_constraint_in_ones_own_words_is_not_a_copy_of_the_raises_entry():
    share, _, _ = _graded(
        "q5",
        "num_heads has to divide d_model exactly, so that every head gets the same number of "
        "features, d_model / num_heads of them.",
    )
    assert share == 1.0


def _rechecks(output: str) -> str:
    return "\n".join(line for line in output.split("\n") if line.startswith("Re-check"))


_AVERAGED = "how the heads' outputs are combined"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "256 with one head and 256 with four. No weights are added because the four heads "
            "are averaged into a single output instead of being concatenated.",
        ),
        (
            "q1",
            "There is one Wq, Wk and Wv for the whole layer and no matrices per head; Q, K and V "
            "are cut into equal chunks, one per head, and at the end we average the heads' "
            "outputs.",
        ),
        (
            "challenge",
            "Equal parameters are not equal capability. The eight heads are averaged together "
            "at the end, yet each is an independent softmax over its own small subspace, so a "
            "token keeps several patterns in one layer, which a single head cannot.",
        ),
    ],
)
def test_heads_averaged_instead_of_concatenated_is_charged_in_every_question(qid, text):
    share, flagged, output = _graded(qid, text)
    assert _AVERAGED in _rechecks(output)
    assert share <= 0.5 or flagged


def test_torch_averaging_the_returned_weights_over_heads_is_no_misconception():
    _, _, output = _graded(
        "q3",
        "No. Head 0 puts token 0's weight on tokens 2 and 3, head 1 on token 4. Torch by default "
        "averages the attention weights over the heads, so I passed average_attn_weights=False.",
    )
    assert _AVERAGED not in _rechecks(output)


def test_an_equal_share_of_q_k_and_v_is_each_heads_chunk():
    share, _, _ = _graded(
        "q1",
        "No head owns projection matrices: the single Wq, Wk and Wv give Q, K and V at full "
        "d_model, and each head then takes an equal share of them.",
    )
    assert share == 1.0


@pytest.mark.parametrize("note", ["Nope. 1+2 vs 3.", "No: tokens 3, 4 versus 1 for token 0."])
def test_a_pair_of_tokens_against_another_in_a_note_is_the_evidence(note):
    assert _graded("q3", note)[0] == 1.0


def test_two_heads_against_each_other_are_no_evidence():
    assert _graded("q3", "No, heads 1 vs 2 differ.")[0] < 1.0


_SOFTMAXES = "With {h} heads and d_model = 16 the layer runs {h} independent softmaxes instead of 1"


def test_a_head_width_that_is_not_d_model_over_the_head_count_earns_no_width():
    share, _, _ = _graded("q4", _SOFTMAXES.format(h=2) + ", each over d_head = 4 dimensions.")
    assert share == 0.5


@pytest.mark.parametrize(("heads", "width"), [(2, 8), (4, 4)])
def test_a_head_width_that_fits_the_numbers_given_still_counts(heads, width):
    text = _SOFTMAXES.format(h=heads) + f", each over d_head = {width} dimensions."
    assert _graded("q4", text)[0] == 1.0


_CONTEXT = "which tokens each head can attend to"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "One independent softmax per head, each over d_model/num_heads features instead of "
            "d_model; on top of that every head gets a longer context, so it reaches further back.",
        ),
        (
            "challenge",
            "Equal parameters are not equal capability: eight independent softmaxes over small "
            "subspaces let one token keep several patterns in one layer, where one head must "
            "squeeze every relationship into one softmax; also each head has its own context "
            "window.",
        ),
    ],
)
def test_a_context_of_its_own_per_head_is_charged_in_every_question(qid, text):
    share, flagged, output = _graded(qid, text)
    assert _CONTEXT in _rechecks(output)
    assert share <= 0.5 or flagged


def test_every_head_seeing_the_whole_sequence_is_no_misconception():
    _, _, output = _graded(
        "q4",
        "One softmax per head instead of one in all, each over d_model/num_heads features; every "
        "head still sees the same whole context window.",
    )
    assert _CONTEXT not in _rechecks(output)
