"""Issue 21, set M seen: its misses handled as classes, in words of their own, not the labelled
set's: what a supposition's prediction spells out after a colon."""

from __future__ import annotations

import pytest
from written_support import graded as _graded


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "challenge",
            "If we trusted the lecture notes, the reply would be this: eight independent "
            "softmaxes over smaller subspaces let several patterns coexist for one token, and one "
            "head forces one softmax to serve every relationship, so equal parameters are not "
            "equal capability.",
        ),
        (
            "q1",
            "If you went by the slides, the story would be that the heads share weights: one Wq, "
            "Wk, Wv at full d_model, and the result cut into equal chunks, one per head.",
        ),
    ],
)
def test_what_a_colon_spells_out_after_a_supposed_prediction_is_supposed_too(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share <= 0.25 and not flagged


def test_the_student_speaking_after_the_colon_of_a_prediction_keeps_the_claim():
    share, _, _ = _graded(
        "q5",
        "If a head count did not divide d_model, the split would fail: I checked that d_model "
        "must be divisible by num_heads, so every head gets an equal d_model/num_heads chunk.",
    )
    assert share == 1.0
