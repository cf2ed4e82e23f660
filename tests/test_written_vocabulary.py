"""Issue 21 round 3: right answers in words the rubrics did not hold (a paraphrase of each
concept's idea), and the wrong answers in the same words that must stay wrong. The examples are in
words of their own, not the labelled sets'."""

from __future__ import annotations

from written_support import graded as _graded


def test_one_of_each_matrix_for_the_layer_is_the_shared_projection():
    share, flagged, _ = _graded(
        "q1",
        "The layer only has one of each, and every head takes a piece of the projected Q, K and V.",
    )
    assert share == 1.0 and not flagged


def test_one_matrix_for_each_head_is_not_one_of_each():
    share, _, _ = _graded("q1", "There is one of each head's Wq, Wk and Wv.")
    assert share <= 0.5


def test_weight_shapes_set_by_d_model_alone_say_why_the_count_stays():
    share, flagged, _ = _graded("q2", "256 twice: the matrix shapes depend on d_model only.")
    assert share == 1.0 and not flagged


def test_weight_shapes_that_depend_on_the_head_count_too_say_nothing_of_why():
    share, _, _ = _graded("q2", "256 twice: the matrix shapes depend on d_model and num_heads.")
    assert share <= 0.5


def test_each_heads_softmax_is_one_softmax_per_head():
    share, _, output = _graded(
        "q4", "Each head's softmax sees only a d_model/h slice of the features."
    )
    assert share == 1.0, output


def test_a_count_that_hides_what_is_lost_is_the_teams_argument_failing():
    share, _, output = _graded(
        "challenge",
        "One head means one softmax per token that must serve every relationship; the identical "
        "parameter count conceals that.",
    )
    assert "whether the team's argument holds" in output.split("\n")[0]
    assert share >= 0.75


def test_no_longer_following_two_things_at_the_same_time_is_the_capability_lost():
    share, _, output = _graded(
        "challenge",
        "With one head a word can no longer follow its verb and a pronoun far back at the same "
        "time.",
    )
    assert "the capability at risk" in output.split("\n")[0]
    assert share >= 0.375


def test_not_necessarily_the_same_capability_is_no_contradiction():
    share, flagged, output = _graded(
        "challenge",
        "It may lose the ability to attend to several relationships at once; equal parameters "
        "don't necessarily mean equal expressiveness.",
    )
    assert not flagged, output
    assert "whether the team's argument holds" in output.split("\n")[0]


def test_equal_parameters_meaning_equal_power_asserted_stays_wrong():
    share, _, _ = _graded(
        "challenge",
        "Equal parameters mean equal power, so one head loses nothing and runs the same.",
    )
    assert share <= 0.25


def test_an_opening_yes_without_its_comma_is_still_the_bare_answer():
    # "Yes they ..." is "Yes, they ...": set against a finding that the heads differ
    share, flagged, _ = _graded("q3", "Yes they are alike, the one difference is in the values.")
    assert flagged or share <= 0.25


def test_an_opening_no_without_its_comma_answers_the_question():
    share, flagged, output = _graded("q3", "No they do not: head 0 sat on token 1, head 1 on 3.")
    assert share == 1.0 and not flagged, output


def test_no_that_belongs_to_the_claim_is_no_bare_answer():
    share, flagged, _ = _graded("q1", "No head has projection matrices of its own.")
    assert not flagged and share > 0


def test_counts_that_tie_are_the_finding():
    share, _, output = _graded("q2", "They tie at 256, as the four W's stay d_model x d_model.")
    assert share == 1.0, output


def test_a_softmax_count_that_goes_down_goes_against_the_module():
    share, flagged, _ = _graded(
        "q4", "With more heads the softmax count goes down, and each head gets d_model/h features."
    )
    assert flagged or share <= 0.5


def test_heads_attending_differently_is_no_report_of_the_experiment():
    share, _, output = _graded("q3", "Not the same pattern: each head attends in its own way.")
    assert "what your experiment showed" not in output.split("\n")[0]
    assert share < 1.0


def test_rows_peaking_in_different_places_is_what_the_experiment_showed():
    share, _, output = _graded(
        "q3", "Not the same: their rows had their maxima in different places."
    )
    assert share == 1.0, output


def test_numpys_column_slice_of_q_is_the_split():
    _, _, output = _graded("q1", "Every head uses Q[:, 4*h:4*h+4] and the same for K and V.")
    assert "how each head gets its part" in output.split("\n")[0]


def test_a_width_in_numbers_against_one_wide_map_is_the_smaller_subspace():
    share, _, output = _graded(
        "q4",
        "Sixteen attention maps, each built from 32-dimensional queries, rather than one map "
        "from 512-dimensional ones.",
    )
    assert share == 1.0, output


def test_heads_given_slices_of_the_vocabulary_is_the_sequence_misconception():
    share, _, output = _graded(
        "q4",
        "With more heads, each head gets a slice of the vocabulary; together the heads cover more "
        "words.",
    )
    assert share <= 0.25 and "which part of the input each head works with" in output


def test_the_modules_diagram_or_reference_table_cited_is_credited_in_part():
    own, _, _ = _graded("q4", "h independent softmaxes, each over d_model/h dimensions.")
    cited, _, output = _graded(
        "q4", "The reference table lists h independent softmaxes, each over d_model/h dimensions."
    )
    assert own == 1.0
    assert 0 < cited < own, output


def test_no_extra_parameters_is_the_finding_not_why():
    share, _, output = _graded("q2", "Adding a head brought no extra parameters.")
    assert "why the number of heads does not change the count" not in output.split("\n")[0]
    assert share <= 0.5


def test_all_heads_looking_at_the_same_tokens_goes_against_the_module():
    share, flagged, _ = _graded(
        "q3", "Both heads look at the same tokens; the one difference is in how strongly."
    )
    assert flagged or share <= 0.25


def test_the_same_weights_feeding_every_head_is_no_matrix_per_head():
    share, flagged, output = _graded(
        "q1", "One set of weights serves every head; each head reads its own columns of Q, K, V."
    )
    assert share == 1.0 and not flagged, output


def test_only_one_thing_at_a_time_is_the_capability_lost():
    _, _, output = _graded(
        "challenge", "With a single head a token can watch only one word at a time."
    )
    assert "the capability at risk" in output.split("\n")[0]


def test_a_halved_count_goes_against_the_finding():
    share, flagged, _ = _graded("q2", "1 head: 256.\n2 heads: 128, the weights are shared out.")
    assert flagged or share <= 0.25


def test_a_softmax_count_that_stays_at_one_goes_against_the_module():
    share, flagged, _ = _graded(
        "q4", "The count of softmaxes remains 1; the matrices just get bigger."
    )
    assert flagged or share <= 0.25


def test_a_bigger_subspace_per_head_is_not_the_smaller_one():
    share, _, output = _graded("q4", "Each head works in a bigger subspace as heads are added.")
    assert "Recognised: the size of the space" not in output
    assert share <= 0.25
