"""Issue 21, set H seen: its misses handled as classes, so that other phrasings of the same
behaviour go right too. A list of verbless fragments is a keyword list however it is spelled;
what the student says they would not write or say is disowned, a list after a colon included;
hand-out text copied clause by clause, in the passive, with a word swapped here and there, earns
nothing. The examples are in words of their own, not the labelled sets'."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

# --------------------------------------------------------------- fragments are a keyword list


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q1", "one projection set; whole d_model width; chunks afterwards; per head; no own Wq"),
        ("q4", "more softmaxes; smaller subspaces; d_model/num_heads each; same params"),
        (
            "challenge",
            "independent softmaxes, several patterns, one distribution only, no capacity",
        ),
    ],
)
def test_a_list_of_verbless_fragments_goes_to_a_teacher_at_a_quarter(qid, text):
    share, flagged, output = _graded(qid, text)
    assert flagged and share <= 0.25, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "Shared Wq, Wk, Wv at full d_model; the result is split into equal chunks; no "
            "head owns a matrix.",
        ),
        ("q2", "256 vs 256; heads are a reshape; no new weights"),
        ("q5", "d_model % num_heads == 0; else the chunks are unequal"),
    ],
)
def test_terse_clauses_apart_by_semicolons_are_no_keyword_list(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


# ---------------------------------------------------------- what I would not write or say


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "challenge",
            "What I would never write here: that eight heads compute independent softmaxes over "
            "smaller subspaces, that a single softmax has to serve every relationship, and that "
            "equal parameters do not mean equal capability.",
        ),
        ("q2", "I would never say that the count is the same for one and two heads."),
        (
            "q1",
            "I won't claim that one shared set of projections at full d_model is split per head.",
        ),
        ("q5", "Things I wouldn't state: num_heads has to divide d_model."),
    ],
)
def test_what_the_student_would_not_write_or_say_earns_nothing(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0.0, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "What I wouldn't say is that each head has its own matrices: there is one shared Wq, "
            "Wk, Wv at full d_model, split into equal chunks per head.",
        ),
        (
            "q2",
            "I would not say the count changes: it is 256 for both, since the heads are a "
            "reshape of the same projections.",
        ),
    ],
)
def test_a_wrong_idea_the_student_would_not_say_leaves_their_own_answer_whole(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1.0 and not flagged, output


# -------------------------------------------------- copied clause by clause, in the passive


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "For token 0, attention is divided between tokens 2 and 3 by head 0 and all of it is "
            "placed on token 4 by head 1; same input, same projections, only the features each "
            "head sees differ.",
        ),
        (
            "q3",
            "All of token 0's attention is given to token 4 by head 1, head 0 splitting it "
            "between tokens 2 and 3: same input, same projections, only the slice of features "
            "seen by each head differs.",
        ),
    ],
)
def test_hand_out_clauses_in_the_passive_with_a_word_swapped_earn_nothing(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0.0, output
    assert "copied from" in output


@pytest.mark.parametrize(
    "text",
    [
        "No. Head 0 split token 0's attention between tokens 2 and 3, but head 1 put all of it "
        "on token 4, even though both got the same input.",
        "No: for token 0, head 0 attends to tokens 2 and 3 while head 1 attends only to token 4, "
        "with the same input and the same projections.",
    ],
)
def test_the_finding_in_the_students_own_sentence_is_no_copy(text):
    share, flagged, output = _graded("q3", text)
    assert share == 1.0 and not flagged, output


# ------------------------------------------------------ a relative clause in a hedged guess


@pytest.mark.parametrize(
    "text",
    [
        "I might be wrong, but I think the heads probably share one Wq, Wk, Wv applied at full "
        "d_model, which then seems to be cut into equal chunks, so perhaps none per head?",
        "All heads share one Wq, Wk, Wv computed at full d_model, which is split into equal "
        "chunks, so no separate matrices per head?",
    ],
)
def test_a_statement_with_a_which_clause_ending_in_a_question_mark_is_a_guess_not_a_question(
    text,
):
    share, _, output = _graded("q1", text)
    assert share >= 0.75, output


def test_which_after_a_colon_still_asks():
    share, _, output = _graded("q2", "Look at the four matrices: which of them grows with heads?")
    assert share == 0.0, output


# ------------------------------------------------- the course's staff and material followed


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "The lecturer demonstrated 256 for both, because the weight matrices do not depend on "
            "the number of heads.",
        ),
        (
            "challenge",
            "Per the lecture notes, one head has a single softmax that must serve every "
            "relationship, while 8 heads compute independent softmaxes over smaller subspaces and "
            "can hold different patterns for the same token at once.",
        ),
        (
            "challenge",
            "Following the slides: one softmax must serve every relationship with a single head, "
            "while 8 independent softmaxes over smaller subspaces hold different patterns at "
            "once; equal parameters are not equal capability.",
        ),
    ],
)
def test_the_course_staff_or_material_as_the_only_source_earns_at_most_about_half(qid, text):
    share, _, output = _graded(qid, text)
    assert 0.25 <= share <= 0.625, output


def test_the_staffs_result_confirmed_by_the_students_run_is_theirs():
    share, flagged, output = _graded(
        "q2",
        "The TA showed in the tutorial that both give 256, and my run gave the same: the four "
        "matrices are d_model x d_model whatever the head count.",
    )
    assert share == 1.0 and not flagged, output


def test_per_my_run_is_the_students_own_finding():
    share, flagged, output = _graded(
        "q5", "Per my run, d_model must be divisible by num_heads so each head gets an equal chunk."
    )
    assert share == 1.0 and not flagged, output


# ------------------------------------------------- 'same' said of training, not of the count


@pytest.mark.parametrize(
    "text",
    [
        "With two heads each epoch took a bit longer, and the loss fell at roughly the same rate.",
        "Two heads trained at the same speed and reached the same accuracy.",
    ],
)
def test_the_same_rate_or_accuracy_is_not_the_same_count(text):
    share, _, output = _graded("q2", text)
    assert share == 0.0, output


def test_the_same_count_beside_training_words_is_still_the_finding():
    share, flagged, output = _graded(
        "q2", "Same count, 256 for both: the heads are a reshape of the same projections."
    )
    assert share == 1.0 and not flagged, output


# ------------------------------------------------- the sequence cut up, in the passive


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q3", "They differ because the sentence gets divided up between them."),
        ("q4", "More heads means the sequence is chopped into more pieces, one per head."),
        ("q2", "Still 256, since the sentence is just split, no weights are added."),
    ],
)
def test_the_sequence_divided_up_is_the_heads_split_the_tokens_misconception(qid, text):
    share, _, output = _graded(qid, text)
    assert share <= 0.5, output
    assert "which part of the input each head works with" in output


def test_a_tokens_vector_divided_up_is_the_right_idea():
    share, flagged, output = _graded(
        "q1",
        "One shared Wq, Wk, Wv at full d_model; each token's vector is then divided up into "
        "equal chunks, one per head, so no head has its own matrices.",
    )
    assert share == 1.0 and not flagged, output


# ------------------------------------------------- the one full softmax, repeated per head


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q4", "Nothing really changes: the whole softmax over all of d_model just runs h times."),
        (
            "q4",
            "Each head computes the full attention over d_model, so it is done num_heads times.",
        ),
        ("challenge", "One head is fine: 8 heads only repeat the same full softmax 8 times."),
    ],
)
def test_the_same_full_softmax_repeated_per_head_earns_nothing_in_any_question(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0.0, output
    assert "what each head's softmax works over" in output


@pytest.mark.parametrize(
    "text",
    [
        "Each head runs the same softmax formula, but over its own d_model/num_heads slice, so "
        "there are more softmaxes, each smaller.",
        "Instead of one softmax over the full d_model, there are num_heads independent softmaxes, "
        "each over a d_model/num_heads subspace.",
    ],
)
def test_the_same_formula_over_a_smaller_slice_is_the_right_idea(text):
    share, flagged, output = _graded("q4", text)
    assert share == 1.0 and not flagged, output


# ------------------------------------------------------ texting and non-native spellings


@pytest.mark.parametrize(
    "text",
    [
        "more softmaxs (1 per head) n each 1 is smaller, d_model/heads dims",
        "more softmaxes, one per head, each one smaller: d_model/n_heads dims",
    ],
)
def test_the_head_count_spelled_heads_or_n_heads_in_a_width_is_the_smaller_subspace(text):
    share, flagged, output = _graded("q4", text)
    assert share == 1.0 and not flagged, output


@pytest.mark.parametrize(
    "text",
    [
        "d_model must be dividable through num_heads. Else the heads cannot become equal pieces.",
        "d_model has to be divisible with num_heads, so every head gets an equal chunk.",
    ],
)
def test_divisible_with_a_non_native_preposition_is_the_constraint(text):
    share, flagged, output = _graded("q5", text)
    assert share == 1.0 and not flagged, output


def test_num_heads_divisible_through_d_model_is_still_the_wrong_way_round():
    share, _, output = _graded("q5", "num_heads must be dividable through d_model.")
    assert share == 0.0, output


# ------------------------------------------------------------------ a CNN's vocabulary


def test_shared_filters_over_all_channels_split_into_groups_is_the_right_idea():
    share, flagged, output = _graded(
        "q1",
        "The heads share one set of kernels for query, key and value over all channels; the "
        "output channels are then split into equal groups, one per head, so none has its own "
        "kernels.",
    )
    assert share == 1.0 and not flagged, output


@pytest.mark.parametrize(
    "text",
    ["Every head gets the full Q, K and V and uses its own filters.", "Each head gets all of Q."],
)
def test_every_head_getting_all_of_q_is_still_charged(text):
    share, _, output = _graded("q1", text)
    assert share == 0.0, output


# ---------------------------------------------------- a pasted error naming a non-divisor


@pytest.mark.parametrize(
    "text",
    [
        "parameter_counts(8, [4, 5]) raised ValueError: 5 does not divide d_model = 8",
        "ValueError: d_model = 8 is not divisible by 3",
    ],
)
def test_a_pasted_error_for_a_non_divisor_states_the_constraint_without_its_reason(text):
    share, _, output = _graded("q5", text)
    assert 0.5 <= share <= 0.75, output


def test_not_needing_to_be_divisible_is_still_wrong():
    share, _, output = _graded("q5", "d_model does not need to be divisible by num_heads.")
    assert share == 0.0, output


# ---------------------------------------- what 'otherwise' leads to, spelled out after a colon


@pytest.mark.parametrize(
    "text",
    [
        "d_model has to be a multiple of num_heads. Otherwise the reshape breaks: d_head would "
        "not be a whole number and the heads could not get equal chunks.",
        "num_heads must divide d_model, otherwise the split cannot work: each head would get a "
        "different number of features.",
    ],
)
def test_a_colon_after_otherwise_in_the_conditional_mood_is_what_would_happen(text):
    share, flagged, output = _graded("q5", text)
    assert share == 1.0 and not flagged, output


def test_i_am_not_saying_disowns_what_follows():
    share, flagged, output = _graded(
        "q5", "I'm not claiming that num_heads has to divide d_model so each head gets equal parts."
    )
    assert share == 0.0 and not flagged, output


def test_every_pair_of_heads_with_a_different_pattern_for_the_same_token_says_they_differ():
    share, flagged, output = _graded(
        "q3",
        "No. Head 0 went to tokens 2 and 3, head 1 to token 4, and with four heads every pair "
        "of heads had a different pattern for the same token.",
    )
    assert share == 1.0 and not flagged, output


def test_every_head_looking_at_the_same_token_still_says_they_agree():
    share, _, output = _graded("q3", "Yes: all heads look at the same tokens for token 0.")
    assert share == 0.0, output
