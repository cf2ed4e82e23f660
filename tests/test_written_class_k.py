"""Issue 21, sets K and I seen: their misses handled as classes, so that other phrasings of the
same behaviour go right too. The examples are in words of their own, not the labelled sets'."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

from mha_grader.written.copies import find_copies
from mha_grader.written.rubric import load_rubrics


def _copied(qid: str, text: str) -> bool:
    rubric = load_rubrics()[qid]
    return bool(find_copies(rubric, rubric.normaliser.sentences(text)))


# ------------------------------------------------- a hand-out's sentence with synonyms swapped


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # split_heads' docstring, every other word swapped for one a thesaurus offers
        (
            "q1",
            "Multi-head attention transforms Q, K and V one time at full d_model and later "
            "partitions the feature dimension into num_heads equal portions, one per head.",
        ),
        # the notebook's finding, likewise
        (
            "q3",
            "Head 0 divides its focus among tokens 2 and 3, while head 1 places the whole of it "
            "on token 4.",
        ),
    ],
)
def test_a_hand_out_sentence_with_its_words_swapped_for_synonyms_is_a_copy(qid, text):
    assert _copied(qid, text)
    share, _, output = _graded(qid, text)
    assert share == 0.0 and "copied" in output, output


def test_the_same_words_in_a_sentence_of_ones_own_are_no_copy():
    text = (
        "Q, K and V are each computed one time with the full-width matrices; afterwards every "
        "head takes its own equal slice of the features."
    )
    assert not _copied("q1", text)
    share, flagged, output = _graded("q1", text)
    assert share == 1.0 and not flagged, output


# -------------------------------------- the sequence shared out among heads, in any question


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "They differ: head 0 weights tokens 2 and 3, head 1 token 4, since each head attends "
            "to a portion of the sequence.",
        ),
        (
            "q2",
            "256 with one head and 256 with two: the four matrices stay d_model x d_model. Each "
            "head just focuses on a fraction of the words.",
        ),
        (
            "q4",
            "More heads give more independent softmaxes, each over d_model/num_heads features, "
            "and every head handles 1/4 of the positions.",
        ),
        (
            "q1",
            "One Wq, Wk, Wv at full d_model, the result cut into equal slices per head, no head "
            "owns a matrix; each head receives a shorter sentence.",
        ),
    ],
)
def test_a_head_given_a_share_of_the_sequence_is_the_misconception_anywhere(qid, text):
    share, _, output = _graded(qid, text)
    assert "which part of the input each head works with" in output, output
    assert share <= 0.5, output


def test_the_tokens_a_head_weights_are_evidence_not_a_share_of_the_sequence():
    text = (
        "No, they differ: for token 0, head 0 looks at tokens 2 and 3 and head 1 attends to "
        "token 4 only."
    )
    share, flagged, output = _graded("q3", text)
    assert share == 1.0 and not flagged, output


# ----------------------------------------------------------- q5: a power of two is no rule


def test_a_power_of_two_requirement_beside_the_constraint_costs_half():
    text = (
        "num_heads must divide d_model so the chunks are equal; on top of that d_model needs "
        "to be a power of 2 for the hardware."
    )
    share, _, output = _graded("q5", text)
    assert "powers of two" in output and share <= 0.5, output


def test_saying_no_power_of_two_is_needed_is_no_misconception():
    text = (
        "d_model has to be divisible by num_heads, so each head gets an equal chunk; neither "
        "number has to be a power of two (12 and 3 work)."
    )
    share, flagged, output = _graded("q5", text)
    assert share == 1.0 and not flagged, output


# ----------------------------------------------- q4: the opposite of a smaller softmax


def test_a_wider_softmax_over_more_than_d_model_is_the_opposite_of_a_smaller_one():
    text = "Each head now runs a wider softmax, over num_heads times d_model features."
    share, _, output = _graded("q4", text)
    assert "the size of the space each head works in: part" in output and share == 0.0, output


def test_more_heads_giving_a_bigger_softmax_is_not_more_softmaxes():
    share, flagged, output = _graded("q4", "With more heads every token gets a bigger softmax.")
    assert share == 0.0 and not flagged, output
    assert "Recognised" not in output, output


# ------------------------------------ a list of terms that names little keeps its quarter


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q2", "Tokenization, embeddings, backpropagation, multi-head layers, torch modules."),
        ("q3", "Heatmaps, interpretability, attention heads, visualisation, induction circuits."),
    ],
)
def test_a_list_of_terms_naming_few_ideas_keeps_its_capped_score_without_review(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share <= 0.25 and not flagged, output
    assert "list of keywords" in output, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # terms that say something: a comparison, a negation, a value
        ("q2", "Tokenization, embeddings, torch modules, weights vs heads."),
        ("q3", "Heatmaps, interpretability, attention heads, no agreement."),
        ("q2", "Tokenization, embeddings, backpropagation, 256, torch modules."),
    ],
)
def test_a_list_that_states_something_still_goes_to_a_teacher(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share <= 0.25 and flagged, output


# ------------------------------------------------------ what the point is not: "it's not that"


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "Nothing changed, 256 and 256. It's not that every head brings a few weights or that "
            "torch adds extra parameters; the four projections stay d_model x d_model and are "
            "only cut up after projecting.",
        ),
        (
            "challenge",
            "It's not about the parameter count, and it's not about each head getting its own "
            "part of the sequence. Eight independent softmaxes over smaller subspaces let one "
            "token attend to several relationships at once; a single head's one softmax has to "
            "serve them all, so same parameters do not mean the same capability.",
        ),
    ],
)
def test_what_the_student_says_the_point_is_not_is_denied_each_time(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


def test_a_pronoun_after_and_ends_the_denial():
    # "it does not need to be a power of two" is the student's own denial, not denied again
    text = (
        "It's not that num_heads must divide the number of tokens, and it does not need to be a "
        "power of two either: d_model has to be divisible by num_heads so every head gets an "
        "equal chunk."
    )
    share, flagged, output = _graded("q5", text)
    assert share == 1.0 and not flagged, output


# ------------------------------- the shared weights beside the same input, in Q3 and anywhere


def test_the_same_weights_beside_the_same_input_are_the_projections_not_the_pattern():
    text = (
        "No. For query token 0, head 0 weights tokens 2 and 3 and head 1 puts everything on "
        "token 4: identical weights, identical input, a different pattern per head."
    )
    share, flagged, output = _graded("q3", text)
    assert share == 1.0 and not flagged, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q4",
            "More heads give more independent softmaxes over smaller d_model/num_heads "
            "subspaces; every head redoes the full projection of the input.",
        ),
        (
            "q2",
            "Still 256 with two heads: Wq, Wk, Wv and Wo stay d_model x d_model. Every head "
            "recomputes the entire projection of the input again, which costs time, not "
            "parameters.",
        ),
    ],
)
def test_every_head_redoing_the_projection_is_a_wrong_idea_anywhere(qid, text):
    share, _, output = _graded(qid, text)
    assert share <= 0.5 and "Re-check" in output, output


# ------------------------------- the student's disbelief opening the next sentence disowns


@pytest.mark.parametrize(
    "text",
    [
        "The notebook says the heads put token 0's weight in different places (tokens 2-3 vs "
        "token 4). I don't buy it, though: random weights should give one pattern for both.",
        "Apparently the lab shows head 0 on tokens 2 and 3 and head 1 on token 4, which would "
        "make them differ. We're not convinced: untrained heads ought to look alike.",
    ],
)
def test_a_reported_finding_the_student_then_disbelieves_earns_nothing(text):
    share, _, output = _graded("q3", text)
    assert share == 0.0, output


# --------------------------------- a guess from a student who says they do not know: half


@pytest.mark.parametrize(
    ("qid", "text", "most"),
    [
        (
            "q2",
            "No clue really, maybe 256 both times because the matrices are d_model x d_model?",
            0.5,
        ),
        (
            "q5",
            "I don't know. Perhaps num_heads has to divide d_model so the chunks are equal?",
            0.5,
        ),
    ],
)
def test_a_guess_after_saying_one_does_not_know_counts_half(qid, text, most):
    share, flagged, output = _graded(qid, text)
    assert 0 < share <= most and not flagged, output


def test_a_guess_alone_counts_in_full_and_not_knowing_why_is_no_guess():
    share, _, output = _graded(
        "q5", "I think d_model must be divisible by num_heads, so each head gets an equal chunk?"
    )
    assert share == 1.0, output
    share, _, output = _graded("q2", "256 and 256, the same. No idea why, though.")
    assert share == 0.5, output


# ------------------------------------------------ more heads as a bigger model, anywhere


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q4", "Extra heads make a larger network, so each layer learns more."),
        (
            "q3",
            "They differ (head 0 on tokens 2 and 3, head 1 on token 4) because more heads give "
            "a bigger model.",
        ),
    ],
)
def test_more_heads_as_a_bigger_model_is_the_parameter_count_misconception(qid, text):
    _, _, output = _graded(qid, text)
    assert "the parameter count" in output, output


def test_same_parameters_not_meaning_the_same_capability_is_no_bigger_model():
    text = (
        "The same parameter count doesn't mean the same capability: one head has one softmax "
        "that must serve every relationship, while eight independent softmaxes over smaller "
        "subspaces let a token attend to several things at once."
    )
    _, _, output = _graded("challenge", text)
    assert "the parameter count" not in output, output


# ----------------------------- both branches of an open supposition: "if P, Q; otherwise R"


@pytest.mark.parametrize(
    "text",
    [
        "It depends on training. If the heads pick up different patterns, then a single head "
        "would lose the ability to attend to several relationships at once; otherwise nothing "
        "is lost.",
        "Hard to say. If the heads turn out to specialise, one head would lose the ability to "
        "attend to several things at the same time; otherwise the team is right and nothing is "
        "lost.",
    ],
)
def test_both_branches_of_an_open_supposition_take_no_side(text):
    share, _, output = _graded("challenge", text)
    assert share == 0.0, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        # after a condition contrary to fact, "otherwise" is what is the case
        (
            "q2",
            "If the heads had their own matrices the count would grow; otherwise it stays the "
            "same, and it is 256 for both since every matrix is d_model x d_model.",
        ),
        # after a requirement, what breaks without it
        (
            "q5",
            "d_model must be divisible by num_heads; otherwise the features can't be cut into "
            "equal chunks.",
        ),
    ],
)
def test_otherwise_after_a_fact_or_a_requirement_still_counts(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


# ---------------------------------------------- a count said equal to the number of heads


def test_a_count_of_softmaxes_equal_to_the_head_count_is_one_per_head():
    text = (
        "The count of softmax computations equals the number of heads, and each one works over "
        "d_model/num_heads features instead of all of d_model."
    )
    share, flagged, output = _graded("q4", text)
    assert share == 1.0 and not flagged, output


# --------------------------------------------------- "I thought X, but ...": a view given up


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "I thought each head owned extra parameters, but both counts came out at 256: every "
            "projection is d_model x d_model whatever the head count.",
        ),
        (
            "q4",
            "I'd have thought each head adds parameters, but what changes is the number of "
            "independent softmaxes, one per head, each over a smaller d_model/num_heads slice.",
        ),
    ],
)
def test_a_view_the_student_thought_and_then_corrects_is_not_charged(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


# --------------------------------------------- doubt as a verdict on what came before


@pytest.mark.parametrize(
    "text",
    [
        "The notebook says both counts are 256 since the projections are d_model x d_model. "
        "Sounds fishy.",
        "According to the notebook the totals match, 256 and 256, because splitting is a "
        "reshape. Looks too neat to me, honestly.",
    ],
)
def test_a_reported_result_the_student_finds_suspect_earns_nothing(text):
    share, _, output = _graded("q2", text)
    assert share == 0.0, output


# ------------------------------------ a note line that opens with an arrow is a line of its own


@pytest.mark.parametrize("arrow", ["->", "→", "=>"])
def test_a_note_line_opening_with_an_arrow_does_not_join_the_line_before(arrow):
    text = (
        "Wq, Wk, Wv: one set, applied at full d_model\n\n"
        f"the result sliced {arrow} equal chunks, one chunk per head\n\n"
        f"{arrow} no head owns a matrix"
    )
    sentences = load_rubrics()["q1"].normaliser.sentences(text)
    assert len(sentences) == 3, [[t.word for t in s.tokens] for s in sentences]
    share, flagged, output = _graded("q1", text)
    assert share == 1.0 and not flagged, output
