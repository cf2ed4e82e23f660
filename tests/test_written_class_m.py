"""Issue 21, set M seen: its misses handled as classes, in words of their own, not the labelled
set's: what a supposition's prediction spells out after a colon; wrong ideas about the layer that
no question's rubric listed, asserted beside right ideas (a projection d_head x d_head, the head
dimension's formula turned round, a bias per head, heads trained on different data, compute that
grows with the heads, a softmax over the values), charged in every question and not when denied;
the notebook's names read as the ideas they name (a check quoted with its arguments, a token's
rows of the weights, its weights matrices counted, parameter_counts); heads that look "elsewhere"
without saying where; the other case of a requirement ("with any other head count ... would");
a named thing denied lost ("it doesn't lose parameters") is not "nothing is lost"; a word put in
brackets inside a clause ("no (separate) matrices") stays part of it; a concession's negation
("the team is right that the count won't change, but that is not capability") is the conceded
side's; "the count doesn't show what is lost"; softmaxes "each over a slice"; a named classmate's
words ("Priya said X") reported unless endorsed, a quotation's closing mark ending its sentence;
one head said to work on another's output (heads in series)."""

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


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "The three projections Wq, Wk and Wv are shared by all heads and applied once, each "
            "one d_head by d_head; their output is then cut into equal chunks, one per head.",
        ),
        (
            "q4",
            "Every head runs its own independent softmax, so one softmax per head, over its "
            "slice of the features; here d_head = d_model times num_heads.",
        ),
        (
            "q2",
            "The counts matched, 256 and 256: the four matrices stay d_model x d_model whatever "
            "the head count, the heads only partition the output. Each head does own a separate "
            "bias, mind you.",
        ),
        (
            "q3",
            "They differ: for token 0, head 0 spread its weight over tokens 2 and 3 and head 1 "
            "gave token 4 everything, as the heads learned from different training examples.",
        ),
        (
            "challenge",
            "Equal parameters are not equal capability: 8 heads run independent softmaxes over "
            "smaller subspaces, so several patterns coexist for one token, while one head forces "
            "a single softmax to serve every relationship. Mind, the overall cost rises a lot.",
        ),
        (
            "q4",
            "One softmax per head, each independent, each over d_model/num_heads features "
            "instead of d_model, and each softmax is taken across the values.",
        ),
    ],
)
def test_a_wrong_idea_about_the_layer_beside_right_ones_costs_points(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share <= 0.5


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "The counts matched, 256 and 256: the four matrices stay d_model x d_model whatever "
            "the head count, the heads only partition the output; no head has a bias of its own "
            "either.",
        ),
        (
            "q4",
            "One softmax per head, each independent, each over d_model/num_heads features "
            "instead of d_model; the softmax weights then average the values, and the total "
            "compute does not grow.",
        ),
    ],
)
def test_the_same_wrong_idea_denied_costs_nothing(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share == 1.0 and not flagged


def test_equal_parts_named_as_what_a_head_gets_state_the_split():
    share, flagged, _ = _graded(
        "q1",
        "Each head does have queries of its own, but no matrix of its own. Those queries are "
        "equal pieces, made later, of the single Q that a shared Wq computes at full width.",
    )
    assert share == 1.0 and not flagged


def test_the_check_quoted_as_code_with_its_arguments_reports_its_result():
    # the call's arguments between the check and its result ("is False") do not hide the result
    share, flagged, _ = _graded("q3", "`np.allclose(attn[0], attn[1])` is `False`.")
    assert share == 1.0 and not flagged
    share, _, _ = _graded("q3", "`np.allclose(attn[0], attn[1])` is `True`.")
    assert share == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "No: the two heads concentrated on different tokens.",
        "They are not alike: head 1 looked at other tokens than the first one did.",
    ],
)
def test_heads_looking_elsewhere_without_naming_where_is_no_evidence(text):
    share, _, output = _graded("q3", text)
    assert 0.5 <= share < 1.0 and "what your experiment showed" not in output.split("\n")[0]


def test_heads_and_the_tokens_they_looked_at_are_evidence():
    share, _, _ = _graded("q3", "No: head 0 looked at tokens 2 and 3, head 1 at token 4.")
    assert share == 1.0


@pytest.mark.parametrize(
    ("text", "idea"),
    [
        (
            "With h = 8 the weights hold eight rows for token 3, which may differ from each other.",
            "the capability at risk",
        ),
        (
            "One head gives each token one row of weights instead of eight.",
            "the capability at risk",
        ),
        (
            "`parameter_counts` returns the same number for both, but that is no guarantee of "
            "the same capability.",
            "whether the team's argument holds",
        ),
    ],
)
def test_the_notebooks_names_are_read_as_the_ideas_they_name(text, idea):
    _, _, output = _graded("challenge", text)
    assert idea in output.split("\n")[0]


def test_a_count_of_the_notebooks_weights_matrices_counts_the_softmaxes():
    share, _, output = _graded(
        "q4", "With 8 heads I get eight 7 x 7 weights matrices where one head gave one."
    )
    assert share == 0.5 and "how many attention computations there are" in output


@pytest.mark.parametrize(
    "text",
    [
        "d_model has to be a multiple of num_heads; for any other head count the heads would "
        "not get equal chunks: each gets d_model/num_heads features.",
        "The head count must divide d_model, while with a different head count the split would "
        "leave unequal pieces; every head gets exactly d_model/num_heads.",
    ],
)
def test_the_other_case_of_a_requirement_is_what_would_happen_otherwise(text):
    share, flagged, _ = _graded("q5", text)
    assert share == 1.0 and not flagged


def test_another_case_after_a_finding_is_no_otherwise():
    share, _, _ = _graded(
        "q3",
        "No, head 0 put its weight on tokens 2 and 3, head 1 on token 4; with another seed the "
        "two heads would still differ.",
    )
    assert share == 1.0


def test_denying_that_a_named_thing_is_lost_is_not_saying_nothing_is_lost():
    share, flagged, _ = _graded(
        "challenge",
        "A single head does not lose weights. What goes is the eight independent softmaxes over "
        "smaller subspaces that let several patterns coexist for one token: one softmax must "
        "serve every relationship. Same parameters, not the same capability.",
    )
    assert share == 1.0 and not flagged
    share, _, _ = _graded("challenge", "Nothing is lost when the team uses a single head.")
    assert share == 0.0


def test_a_word_put_in_brackets_stays_part_of_its_clause():
    # the negation before the bracketed word still reaches the noun after it
    share, flagged, _ = _graded(
        "q1",
        "One shared Wq, Wk, Wv at full d_model, cut into equal chunks per head; there is no "
        "(private) matrix for any head.",
    )
    assert share == 1.0 and not flagged


def test_a_negation_on_the_conceded_side_of_a_contrast_is_not_the_claims():
    # "won't" belongs to what the student concedes; "not the same" to what they claim
    share, flagged, output = _graded(
        "challenge",
        "The team is right that the weight count won't move, but that is not the same as "
        "capability.",
    )
    first = output.split("\n")[0]
    assert not flagged and first.startswith("Recognised:") and "the team's argument" in first


def test_the_count_not_showing_what_is_lost_is_no_claim_that_nothing_is_lost():
    share, flagged, output = _graded(
        "challenge",
        "Weights: 4 x 64^2 in both layers, so the count does not show what is lost.",
    )
    first = output.split("\n")[0]
    assert not flagged and first.startswith("Recognised:") and "the team's argument" in first


def test_softmaxes_each_over_a_slice_are_independent_subspaces():
    _, _, output = _graded(
        "challenge", "The layer then computes 8 softmaxes, each running over a 32-dim slice."
    )
    first = output.split("\n")[0]
    assert first.startswith("Recognised:") and "how the 8 heads differ from one big head" in first


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "Priya said every head runs its own softmax over d_model/num_heads dimensions.",
        ),
        (
            "q5",
            "Ravi says d_model must divide by num_heads so each head gets an equal chunk. I'm "
            "not sure he's right.",
        ),
    ],
)
def test_a_named_classmates_words_not_endorsed_earn_nothing(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share == 0.0 and not flagged


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "Priya said every head runs its own independent softmax over d_model/num_heads "
            "dimensions, and she's right.",
        ),
        (
            "q2",
            'My lab partner wrote: "Both counts are 256, since Wq, Wk, Wv and Wo stay d_model x '
            'd_model whatever the head count; the heads only split the output." I agree.',
        ),
        (
            "q2",
            'Lena wrote: "Both counts are 256, since Wq, Wk, Wv and Wo stay d_model x d_model '
            'whatever the head count; the heads only split the output." I agree.',
        ),
    ],
)
def test_a_named_classmates_words_endorsed_are_the_students(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share == 1.0 and not flagged


def test_a_tool_that_said_something_is_no_classmate():
    share, _, _ = _graded(
        "q3", "np.allclose said False, so they differ: head 0 on tokens 2 and 3, head 1 on 4."
    )
    assert share == 1.0


def test_one_head_working_on_anothers_output_is_heads_in_series():
    share, _, _ = _graded(
        "q3",
        "No: head 0 weighted tokens 2 and 3, head 1 token 4, since head 1 runs after head 0 and "
        "operates on the output of head 0.",
    )
    assert share <= 0.5


def test_heads_side_by_side_on_one_input_are_not_in_series():
    share, flagged, _ = _graded(
        "q3",
        "No: head 0 weighted tokens 2 and 3, head 1 token 4; both heads work on the same input, "
        "and each head's output is concatenated afterwards.",
    )
    assert share == 1.0 and not flagged
