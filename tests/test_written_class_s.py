"""Issue 21, set S seen: its misses handled as mechanisms, in words of their own, not the labelled
set's. A disclaimer that withdraws the student's backing (a retraction, no view of their own, not
known or not checked themselves, copied, left to the reader or to later work) unclaims what the
answer says before it, wherever it stands, and what follows it stays theirs; mockery (two signs
of irony: scare quotes, a mock "Oh sure", "heaven forbid", a closing "Right.") claims nothing; a
revision's label ("Update:") leaves its verdict to judge the answer before it; an AI assistant's
reply's boilerplate is flagged for a person, with only what was seen named."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q2 = "Both counts are 256, since Wq, Wk, Wv and Wo stay d_model x d_model for any head count"
_Q4 = "Each head runs its own independent softmax over d_model/num_heads dimensions"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # a retraction after the answer, in a sentence of its own
        (
            "q3",
            "For token 0, head 0 looked at tokens 2 and 3 while head 1 looked at token 4, so the "
            "heads differ.\n\nEdit: strike that, forget what I wrote.",
        ),
        # no view of the student's own
        ("q2", f"{_Q2}. Honestly I have no personal opinion on it."),
        # not checked by the student, in a note without its subject
        ("q2", f"{_Q2}; never verified it myself."),
        # copied from somewhere else
        ("q4", f"{_Q4}. I copied these lines from a forum thread."),
        # the reader left to decide
        (
            "q5",
            "d_model has to be divisible by num_heads so every head gets an equal slice. "
            "Make of that what you will.",
        ),
        # a supposition whose premise is left unshown
        (
            "q4",
            "If every head runs its own softmax over d_model/num_heads features, then more heads "
            "mean more, narrower softmaxes. That remains to be shown.",
        ),
        # someone else's words, then no view of the student's own
        (
            "challenge",
            "My cousin who works at a lab would tell you equal parameters are not equal "
            "capability: 8 heads are 8 independent softmaxes over small subspaces, so a token "
            "keeps several patterns in one layer, while one head forces a single softmax to serve "
            "every relationship. No clue myself.",
        ),
    ],
)
def test_a_disclaimer_that_withdraws_backing_unclaims_what_came_before(qid, text):
    share, _, _ = _graded(qid, text)
    assert share == 0.0


def test_what_follows_a_retraction_is_the_students_own():
    share, flagged, _ = _graded(
        "q1",
        "Every head owns its own Wq, Wk and Wv.\n\nUpdate: ignore that. I printed the shapes: one "
        "Wq, Wk and Wv at full d_model, and Q, K, V are cut into equal chunks per head, so no head "
        "has its own matrices.",
    )
    assert share == 1.0 and not flagged


def test_doubt_about_ones_own_claim_stays_a_hedge_not_a_withdrawal():
    share, _, _ = _graded(
        "q3",
        "They differ, head 0 went to tokens 2 and 3 and head 1 to token 4, I think, but I'm not "
        "sure.",
    )
    assert share == 1.0


def test_not_knowing_why_leaves_the_constraint_claimed():
    share, _, _ = _graded("q5", "d_model has to be divisible by num_heads, no idea why though.")
    assert share > 0.0


def test_a_revisions_verdict_judges_the_answer_before_it():
    share, _, _ = _graded(
        "q4", f"{_Q4}.\n\nUpdate: actually, wrong. Nothing changes at all, it is the same layer."
    )
    assert share == 0.0


def test_mockery_with_scare_quotes_and_an_ironic_closer_claims_nothing():
    share, _, _ = _graded(
        "q4",
        'Oh sure, every head gets its "own" softmax over a "smaller" d_model/num_heads '
        "subspace. Right.",
    )
    assert share == 0.0


def test_one_quoted_term_in_a_sincere_answer_is_no_mockery():
    share, flagged, _ = _graded(
        "q1",
        'Heads only "split" Q, K and V: there is one shared Wq, Wk and Wv at full d_model, cut '
        "into equal chunks afterwards, so no head has its own matrices.",
    )
    assert share == 1.0 and not flagged


@pytest.mark.parametrize(
    "text",
    [
        "Of course! Here is a short explanation: the heads give different patterns, head 0 on "
        "tokens 2 and 3 and head 1 on token 4 for token 0. I hope this helps!",
        "As an AI language model I cannot see your notebook, but for token 0 head 0 went to "
        "tokens 2 and 3 and head 1 to token 4, so the heads differ.",
    ],
)
def test_an_assistants_reply_is_flagged_and_never_full(text):
    share, flagged, output = _graded("q3", text)
    assert flagged and share <= 0.5
    # what was seen, no accusation
    assert "wording typical of an AI assistant" in output
    for word in ("cheat", "plagiar", "dishonest", "misconduct"):
        assert word not in output.lower()


def test_more_heads_at_the_same_parameter_count_is_no_wrong_idea():
    # the question's premise restated in the answer is no claim that heads add parameters
    share, flagged, _ = _graded(
        "q4",
        "Going to more heads at an unchanged parameter count, the change is in the softmaxes: "
        "one independent softmax per head, each over d_model/num_heads dimensions instead of "
        "d_model.",
    )
    assert share == 1.0 and not flagged


def test_an_answer_named_but_not_given_claims_nothing():
    # "my run showed whether ...": what the run showed is not said, neither way
    share, flagged, output = _graded(
        "q3",
        "My run showed whether different heads produce the same attention pattern for one token, "
        "and what pattern each head produces.",
    )
    assert share == 0.0 and not flagged and "Re-check" not in output


def test_how_someone_elses_claim_strikes_the_student_endorses_it():
    share, flagged, _ = _graded(
        "q5",
        "My tutor says num_heads has to divide d_model so that every head gets an equal slice. "
        "Seems correct to me, and my own run with 3 heads at d_model = 8 raised an error.",
    )
    assert share == 1.0 and not flagged
