"""What an answer claims, wherever it claims it (issue 21): a misconception is checked in every
question, "Recognised" names only what the answer asserts, keyword lists are one kind in every
question; and the labelled answers of issue 21 (tests/data/written_stance*.toml), with their
whole sheets of disowned and of copied ideas, meet the targets."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

from mha_check.questions import WRITTEN_QUESTIONS
from mha_grader.points import POINTS
from mha_grader.written import grade_answer
from mha_grader.written.agreement import (
    DATA,
    SHEET_AT_MOST,
    grade_labelled,
    grade_sheet,
    held_out,
    load_labelled,
    load_sheets,
    meets_targets,
    summary,
)
from mha_grader.written.flags import KEYWORD_LIST, is_keyword_list

TUNED = DATA / "written_stance.toml"
HELD_OUT = DATA / "written_stance_heldout.toml"
F_TUNED = DATA / "written_stance_f_tune.toml"
F_HELD_OUT = DATA / "written_stance_heldout_f.toml"
KINDS = {
    "otherwise",
    "conditional",
    "disavowal",
    "reported",
    "doubt",
    "hedged",
    "misconception",
    "handout",
    "keywords",
}


# --------------------------------------------------------------- misconceptions in any question
def test_a_shared_projection_split_per_head_is_no_projection_per_head():
    text = "The queries, keys and values come from one shared projection that is split per head."
    share, flagged, output = _graded("q1", text)
    assert share == 1 and not flagged, output


@pytest.mark.parametrize(
    ("qid", "text", "idea"),
    [
        (
            "q5",
            "d_model must be divisible by num_heads because each head handles an equal share "
            "of the tokens.",
            "which part of the input each head works with",
        ),
        (
            "q3",
            "They differ because head 0 runs first and head 1 refines its output.",
            "how the heads are arranged in the layer",
        ),
    ],
)
def test_a_misconception_given_as_the_reason_is_named(qid, text, idea):
    share, _, output = _graded(qid, text)
    assert idea in output and share < 1, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q3", "They differ because each head learns its own weights for the query and key."),
        ("q4", "Each head has its own Wq, Wk and Wv, so there are more separate softmaxes."),
        ("q5", "d_model must be divisible by num_heads since every head has its own Wq."),
        ("challenge", "Eight heads have eight private sets of projection matrices."),
    ],
)
def test_a_head_owning_its_projections_is_named_in_every_question(qid, text):
    share, flagged, output = _graded(qid, text)
    assert "whether a head has projection matrices of its own" in output
    assert share < 1 and (flagged or share <= 0.5), output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q5",
            "d_model must be divisible by num_heads so each head gets the same number of tokens.",
        ),
        ("q4", "With more heads, each head processes a smaller chunk of the sentence."),
        ("q3", "The patterns differ because each head only processes a few of the tokens."),
    ],
)
def test_heads_splitting_the_sequence_is_named_in_every_question(qid, text):
    share, _, output = _graded(qid, text)
    assert "which part of the input each head works with" in output
    assert share <= 0.5


@pytest.mark.parametrize("qid", ["q3", "q5", "challenge"])
def test_more_heads_more_parameters_is_named_in_every_question(qid):
    output = grade_answer(qid, "More heads add parameters.").output
    assert "Re-check what you say about the parameter count" in output


def test_a_wrong_idea_a_rubric_reads_as_a_contradiction_is_charged_once():
    # Q1's own concept reads "each head has its own matrices" as the opposite of its idea
    output = grade_answer("q1", "Each head has its own projection matrices.").output
    assert output.count("whether a head has projection matrices of its own") == 1


@pytest.mark.parametrize(
    "text",
    [
        "With more heads there is more softmax, but every head see less tokens so it is faster.",
        "More heads give more independent softmaxes. Each head looks at fewer tokens, though.",
    ],
)
def test_a_right_idea_in_a_clause_of_its_own_beside_a_wrong_one_goes_to_a_teacher(text):
    share, flagged, output = _graded("q4", text)
    assert flagged and share <= 0.5, output
    assert "what each head sees of the sequence" in output


@pytest.mark.parametrize(
    "text",
    [
        "Each head attends to fewer tokens, so the attention becomes more local.",
        "More heads means the model's d_model gets bigger, since each head adds d_head dimensions.",
    ],
)
def test_what_a_wrong_idea_leads_to_is_no_right_idea_of_its_own(text):
    share, flagged, output = _graded("q4", text)
    assert share == 0 and not flagged, output


def test_a_heads_own_attention_weights_are_no_projection():
    text = "No: each head has its own attention weights, head 0 on tokens 2 and 3, head 1 on 4."
    share, flagged, output = _graded("q3", text)
    assert share == 1 and not flagged and "Re-check" not in output


# -------------------------------------------------------------------- "Recognised" is asserted
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q4", "head 0 only sees the first tokens, head 1 the next ones, and so on."),
        ("q2", "A myth says the count is 256 for both because splitting is a reshape. Wrong."),
        ("q5", "Some claim num_heads must divide d_model so every head gets an equal chunk."),
    ],
)
def test_recognised_names_only_what_the_answer_asserts(qid, text):
    assert "Recognised" not in grade_answer(qid, text).output


# ------------------------------------------------------------------- keyword lists, everywhere
SALAD = "different heads different patterns token 2 token 3 token 4 differ yes no"


@pytest.mark.parametrize("qid", WRITTEN_QUESTIONS)
def test_keyword_salad_is_flagged_in_every_question(qid):
    result = grade_answer(qid, SALAD)
    assert KEYWORD_LIST.message in result.output
    assert result.score <= 0.25 * POINTS[qid]


@pytest.mark.parametrize(
    "text",
    [
        "Same, 256 vs 256. Heads = a reshape, not new weights.",
        "256 = 256. Same 4 matrices, split after projecting.",
        "One Wq/Wk/Wv, output sliced per head. No private ones.",
    ],
)
def test_a_terse_real_sentence_is_no_keyword_list(text):
    assert not is_keyword_list(text)


# ------------------------------------------------------------------------ the labelled sets
@pytest.fixture(scope="module")
def tuned():
    return grade_labelled(load_labelled(TUNED))


def test_the_labelled_sets_hold_every_kind_in_every_question():
    for path in (TUNED, HELD_OUT):
        entries = load_labelled(path)
        assert {e["question"] for e in entries} == set(WRITTEN_QUESTIONS)
        assert KINDS <= {e["kind"] for e in entries}
        assert {s["kind"] for s in load_sheets(path)} == {"disavowal", "handout"}
    assert held_out(HELD_OUT) and not held_out(TUNED)


def test_the_tuned_set_meets_the_targets(tuned):
    figures = summary(tuned)
    assert meets_targets(figures), figures


@pytest.mark.parametrize("path", [TUNED, HELD_OUT], ids=["tuned", "held-out"])
def test_a_sheet_of_disowned_or_copied_ideas_earns_a_quarter_at_most_or_is_flagged(path):
    for sheet in load_sheets(path):
        graded = grade_sheet(sheet)
        assert graded.passes, (graded.kind, graded.score)
        assert graded.score <= SHEET_AT_MOST * graded.total or graded.unflagged_over_quarter == 0


def test_the_held_out_set_flags_a_fifth_at_most_and_gives_no_wrong_answer_half_marks():
    # its figures only: the set is never tuned on (its first line says so)
    figures = summary(grade_labelled(load_labelled(HELD_OUT)))
    assert figures["flagged_share"] <= 0.20
    assert figures["zero_above_half"] == 0
    assert figures["max_wrong_share"] <= 0.5


# ------------------------------------------------------------------------------- set F
def test_set_f_is_split_into_a_tuned_part_and_a_held_out_part_of_every_kind():
    tuned, held = load_labelled(F_TUNED), load_labelled(F_HELD_OUT)
    assert held_out(F_HELD_OUT) and not held_out(F_TUNED)
    assert {e["kind"] for e in tuned} == {e["kind"] for e in held}
    assert not {e["text"] for e in tuned} & {e["text"] for e in held}
    assert all(e.get("reason") for e in [*tuned, *held])  # each label says why


def test_set_fs_tuned_part_meets_the_targets():
    figures = summary(grade_labelled(load_labelled(F_TUNED)))
    assert meets_targets(figures), figures


@pytest.mark.parametrize("path", [F_TUNED, F_HELD_OUT], ids=["tuned", "held-out"])
def test_set_fs_sheets_of_disowned_or_reported_ideas_earn_a_quarter_at_most(path):
    for sheet in load_sheets(path):
        assert grade_sheet(sheet).passes, sheet["kind"]
