"""Issue 21, set R seen: its misses handled as classes, in words of their own, not the labelled
set's. A true/false sheet's labels judge the statement each one opens ("False: X" denies X, "True
or false?: X" leaves X open); ..."""

from __future__ import annotations

import pytest
from written_support import graded as _graded


def test_a_true_false_sheet_denies_what_its_false_labels_open():
    share, flagged, _ = _graded(
        "q1",
        "True: the layer keeps a single Wq, Wk and Wv of d_model x d_model. False: every head "
        "owns a projection of its own. True: the projected Q, K and V are sliced into equal "
        "chunks, one per head.",
    )
    assert share == 1.0 and not flagged


def test_a_false_label_denies_the_right_idea_it_opens():
    share, _, _ = _graded(
        "q3",
        "False: for the same token the two heads attend to different places. True: both heads "
        "put token 0's weight on token 4.",
    )
    assert share == 0.0


@pytest.mark.parametrize("label", ["True/False:", "True or false, no idea:", "T/F:"])
def test_a_true_false_label_left_undecided_claims_nothing(label):
    text = "num_heads has to divide d_model, so that every head gets an equal d_model/h slice."
    whole, _, _ = _graded("q5", f"True: {text} True: the library never pads a head.")
    share, _, _ = _graded("q5", f"True: the library never pads a head. {label} {text}")
    assert whole == 1.0 and share == 0.0


def test_a_single_false_after_a_claim_still_judges_that_claim():
    share, _, _ = _graded(
        "q1",
        "Each head owns its own Wq, Wk and Wv. False: one shared Wq at d_model, cut into "
        "equal chunks afterwards, so no head owns a matrix.",
    )
    assert share == 1.0


_Q4_RIGHT = "one softmax per head, each over d_model/num_heads features"
_Q4_WRONG = "nothing at all, it is one attention reshaped"


def test_the_unlikelier_side_of_the_odds_is_not_the_answer():
    share, _, _ = _graded("q4", f"My odds: 25% on {_Q4_RIGHT}, 75% on {_Q4_WRONG}.")
    assert share == 0.0


def test_the_likelier_side_of_the_odds_is_the_answer():
    share, flagged, _ = _graded("q4", f"My odds: 75% on {_Q4_RIGHT}, 25% on {_Q4_WRONG}.")
    assert share == 1.0 and not flagged


def test_the_smaller_share_of_a_split_is_not_charged():
    share, flagged, _ = _graded(
        "q5",
        "60/40 that num_heads must divide d_model so every head gets an equal d_model/h slice; "
        "the 40 is on torch padding the last head.",
    )
    assert share == 1.0 and not flagged


def test_a_split_whose_larger_share_is_the_wrong_idea_charges_it():
    share, _, _ = _graded(
        "q5",
        "40/60 that num_heads must divide d_model so every head gets an equal d_model/h slice; "
        "the 60 is on torch padding the last head.",
    )
    assert share <= 0.5


# ----------------------------------------------- a wrong idea beside a full answer is charged
_FULL_Q1 = (
    "There is a single Wq, Wk and Wv at d_model x d_model, and Q, K and V are cut into equal "
    "slices per head afterwards, so no head owns a projection."
)


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q1", f"{_FULL_Q1} At the end the heads' outputs are averaged."),
        (
            "q1",
            "| matrix | count |\n|---|---|\n| Wq, Wk, Wv | one each for the layer, d_model x "
            "d_model, cut into equal per-head slices after the projection, no head owning one |"
            "\n| Wo | one per head |",
        ),
        (
            "q4",
            "Each head takes softmax(Q_h K_h^T / sqrt(d_model)) by itself, so h heads give h "
            "independent softmaxes, each over d_model/h features.",
        ),
        (
            "q4",
            "h heads run h independent softmaxes, each over d_model/h features. The scores are "
            "still divided by sqrt(d_model) as before.",
        ),
        (
            "q5",
            "num_heads has to divide d_model so every head gets an equal d_model/num_heads slice. "
            "Not really, though: the library just gives the final head a narrower slice.",
        ),
        (
            "q5",
            "Like slicing a cake for guests: d_model must be divisible by num_heads, so every "
            "guest is handed an equal number of tokens.",
        ),
    ],
)
def test_a_wrong_idea_beside_right_ones_is_charged(qid, text):
    share, _, output = _graded(qid, text)
    assert share <= 0.5 and "Re-check" in output


def test_a_full_answer_and_a_wrong_idea_in_a_sentence_of_its_own_is_halved_unflagged():
    share, flagged, _ = _graded("q1", f"{_FULL_Q1} At the end the heads' outputs are averaged.")
    assert share == 0.5 and not flagged


def test_the_scale_at_full_width_with_one_head_is_no_wrong_idea():
    share, _, _ = _graded(
        "q4",
        "1 head: one softmax(Q K^T / sqrt(d_model)) over d_model dims. h heads: h independent "
        "softmax(Q_i K_i^T / sqrt(d_model/h)), each over d_model/h dims.",
    )
    assert share == 1.0


def test_a_work_multiplied_by_the_head_count_is_the_compute_misconception():
    share, _, output = _graded(
        "q4",
        "Four heads mean four independent softmaxes, each over d_model/4 dims, so it is 4 times "
        "the work.",
    )
    assert share <= 0.5 and "computation" in output


def test_one_head_said_to_learn_the_same_things_contradicts_the_capability():
    share, _, _ = _graded(
        "challenge",
        "Equal parameters are not equal capability: eight heads run eight independent softmaxes "
        "over d_model/8 subspaces, so a token can attend to several things in one layer, while "
        "one head forces a single softmax to serve every relationship. Still, a single head "
        "could learn the same patterns given the same parameters.",
    )
    assert share <= 0.5


# ------------------------------------------------------------------- slips and notation
def test_a_phones_slips_for_softmaxes_and_the_head_count_are_read():
    softmaxes, _, _ = _graded(
        "q4", "more soft Macs, one independent one per head, each over d_model/h dims"
    )
    divisible, _, _ = _graded("q5", "d model has to be divisible by num hands")
    assert softmaxes == 1.0 and divisible > 0


def test_the_head_width_as_a_quotient_in_words_is_the_heads_part():
    share, _, _ = _graded(
        "q4",
        "There is one independent softmax per head, each over d_model divided by num_heads "
        "dimensions.",
    )
    assert share == 1.0


def test_a_table_reads_row_by_row():
    share, flagged, _ = _graded(
        "q3",
        "| token 1 looks at | key 1 | key 2 | key 3 |\n|---|---|---|---|\n"
        "| head 0 | 0.7 | 0.3 | 0 |\n| head 1 | 0 | 0 | 1 |\n| same pattern? | no | | |",
    )
    assert share == 1.0 and not flagged


# ------------------------------------------------------ reported, then doubted or borne out
def test_a_passive_report_then_said_to_be_unproven_claims_nothing():
    share, _, _ = _graded(
        "q3",
        "Heads are said to look at different things; head 0 is reported to weight tokens 2 and "
        "3 for token 0, head 1 token 4. That has not been verified.",
    )
    assert share == 0.0


def test_a_report_borne_out_in_ones_own_run_is_claimed_past_an_instead_of():
    share, _, _ = _graded(
        "q4",
        "It is said that every head runs an independent softmax over d_model/h features "
        "instead of d_model, which was confirmed by my notebook: 2 heads gave (2, 5, 5) weights.",
    )
    assert share == 1.0
