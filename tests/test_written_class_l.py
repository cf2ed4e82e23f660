"""Issue 21, set L seen: its disavowed sheet handled as a class, in words of their own, not the
labelled set's: what a source "would have you believe", the "textbook reply", and a view the
student then says they do not hold ("I don't share that view", "not my reading")."""

from __future__ import annotations

import pytest
from written_support import graded as _graded


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "The slides would have us believe that a single Wq, Wk and Wv at full d_model is "
            "shared by the heads.",
        ),
        (
            "challenge",
            "The textbook reply would be that eight heads run independent softmaxes over smaller "
            "subspaces, so several patterns coexist for one token, while one head forces one "
            "softmax to serve every relationship.",
        ),
    ],
)
def test_what_a_source_would_have_one_believe_is_not_the_students_claim(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share <= 0.25 and not flagged


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "More heads give more independent softmaxes, one per head, over d_model/num_heads "
            "dimensions each. I do not subscribe to this: it is one softmax.",
        ),
        (
            "q5",
            "d_model must be divisible by num_heads so every head gets an equal chunk. Not my "
            "view: unequal heads work fine.",
        ),
        (
            "q2",
            "Both counts are 256, the matrices stay d_model x d_model and heads only partition "
            "the output. We don't hold that view: every head adds weights.",
        ),
    ],
)
def test_a_sentence_the_student_then_says_they_do_not_hold_earns_nothing(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share == 0 and not flagged


def test_a_view_the_student_says_they_hold_keeps_its_points():
    share, _, _ = _graded(
        "q1",
        "One shared Wq, Wk and Wv at full d_model is computed first and then sliced into equal "
        "chunks, one per head; no head has matrices of its own. I hold that view firmly.",
    )
    assert share == 1.0


@pytest.mark.parametrize(
    ("qid", "text", "most"),
    [
        # a supposition, and what it would lead to: nothing claimed
        (
            "q4",
            "Provided every head computes its own softmax, the count of softmaxes would be "
            "num_heads, each over d_model/num_heads features. I could not verify it.",
            0.25,
        ),
        (
            "q1",
            "Providing the heads use one shared Wq, Wk, Wv at full d_model, each head would "
            "get an equal chunk of the result.",
            0.25,
        ),
    ],
)
def test_a_provided_supposition_and_what_it_would_lead_to_claim_nothing(qid, text, most):
    share, flagged, _ = _graded(qid, text)
    assert share <= most and not flagged


def test_provided_that_setting_a_scope_keeps_the_claim():
    share, _, _ = _graded(
        "q5",
        "Provided that d_model is divisible by num_heads, each head gets an equal chunk of "
        "d_model/num_heads features: that divisibility is the constraint.",
    )
    assert share == 1.0
