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
