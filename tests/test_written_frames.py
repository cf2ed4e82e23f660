"""More of the stance classes of issue 21 (round 2): disavowal and report frames in other
words, ideas cited from the course material, a condition denied after it, a bare "it" that stands
for d_model or num_heads, hand-out sentences pasted whole, terse notation. Each is a class: the
examples here are in words of their own, not the labelled sets'."""

from __future__ import annotations

import pytest
from written_support import graded as _graded
from written_support import word_frames

from mha_grader.written import grade_written
from mha_grader.written.agreement import SHEET_AT_MOST, grade_sheet
from mha_grader.written.reading import resolve_it
from mha_grader.written.rubric import load_rubrics
from mha_grader.written.stance import Frame, read_stances
from mha_grader.written.text import stem

SHARED = "the heads share one Wq, Wk and Wv and each head takes a slice of Q, K and V"


def _frames(text: str, qid: str = "q1") -> list[dict[str, Frame]]:
    return word_frames(text, qid)


# ------------------------------------------------------------------------- disavowal frames
@pytest.mark.parametrize(
    "frame",
    [
        "A common mistake is to think that {}.",
        "The classic trap is believing {}.",
        "Nobody should believe that {}.",
        "It's a misconception that {}.",
        "Not true that {}.",
        "It isn't the case that {}.",
    ],
)
def test_a_disavowal_frame_denies_the_idea_it_governs(frame):
    text = frame.format(SHARED)
    assert _frames(text)[0]["share"] is Frame.DENIED
    share, _, output = _graded("q1", text)
    assert share <= 0.25, output


@pytest.mark.parametrize(
    "frame",
    ["I've read that {}.", "I'm told that {}.", "I have been told that {}."],
)
def test_what_the_student_read_or_was_told_is_reported_and_earns_little(frame):
    text = frame.format(SHARED)
    assert _frames(text)[0]["share"] is Frame.REPORTED
    assert _graded("q1", text)[0] <= 0.25


def test_contrary_to_governs_only_its_own_clause():
    text = (
        "Contrary to my expectation that all heads would agree, they differed: head 0 split "
        "between tokens 2 and 3, head 1 was fully on token 4."
    )
    share, _, output = _graded("q3", text)
    assert share == 1, output


def test_a_wrong_idea_called_a_common_mistake_and_the_right_one_after_it_earn_full_marks():
    text = (
        "It's a common mistake to think any num_heads works; num_heads must divide d_model, so "
        "each head gets d_model/num_heads features."
    )
    share, flagged, output = _graded("q5", text)
    assert share == 1 and not flagged, output


def test_a_sheet_of_ideas_disowned_in_other_frames_earns_a_quarter_at_most_or_is_flagged():
    sheet = {
        "kind": "disavowal",
        "points": 0,
        "q1": f"A common mistake is to think {SHARED}.",
        "q2": "Nobody should believe that the count is 256 for one and for two heads because "
        "the four matrices are d_model x d_model.",
        "q3": "It's a misconception that head 0 went to tokens 2 and 3 and head 1 to token 4 "
        "for the same token.",
        "q4": "It isn't the case that more heads give more independent softmaxes, each over a "
        "smaller subspace.",
        "q5": "Not true that num_heads must divide d_model so that each head gets an equal chunk.",
        "challenge": "The classic trap is believing that one head loses the ability to attend "
        "to several relationships at once because one softmax must serve them all.",
    }
    graded = grade_sheet(sheet)
    assert graded.score <= SHEET_AT_MOST * graded.total or graded.unflagged_over_quarter == 0


# ------------------------------------------------------------------ cited course material
@pytest.mark.parametrize(
    "frame",
    ["According to the lab notebook, {}.", "The lecture slides say that {}."],
)
def test_an_idea_cited_from_the_course_material_earns_half_and_the_feedback_says_why(frame):
    text = frame.format(SHARED)
    assert _frames(text)[0]["share"] is Frame.CITED
    share, flagged, output = _graded("q1", text)
    assert share == 0.5 and not flagged, output
    assert "counts half" in output and "Every idea this question asks about" not in output


def test_torchs_module_reporting_a_count_is_the_students_own_finding():
    text = (
        "The module shows 256 parameters in both cases; the four projections are "
        "d_model x d_model whatever the head count."
    )
    share, _, output = _graded("q2", text)
    assert share == 1 and "counts half" not in output, output


# ------------------------------------------------------------------ conditions denied after
def test_a_condition_its_next_clause_denies_is_denied_and_names_the_reason():
    text = "Same number: 256. If heads had their own matrices it would double, but they don't."
    assert _frames(text, "q2")[1]["own"] is Frame.DENIED
    share, _, output = _graded("q2", text)
    assert share == 1, output


# ------------------------------------------------------------------ "it" for a quantity
@pytest.mark.parametrize(
    "text",
    [
        "It's wrong to think num_heads can be any number: d_model has to be divisible by it, "
        "or the heads won't get equal chunks.",
        "People often think any head count works. It doesn't: it must divide d_model, else the "
        "heads can't get equal slices.",
        "d_model need not equal num_heads; it just has to be divisible by it, otherwise the heads "
        "would have unequal sizes.",
    ],
)
def test_it_standing_for_d_model_or_num_heads_is_read_as_that_quantity(text):
    share, _, output = _graded("q5", text)
    assert share == 1, output


def test_an_it_that_stands_for_something_else_stays():
    rubric = load_rubrics()["q1"]
    sentences = rubric.normaliser.sentences(
        "Each head has a smaller copy of Wq of size d_model x d_head, that it owns."
    )
    (resolved,) = resolve_it(sentences, read_stances(sentences))
    assert "it" in [t.word for t in resolved.tokens]


# ------------------------------------------------------------------------------ copies
def test_a_hand_out_sentence_pasted_whole_earns_nothing_however_plain_its_words():
    # a public test's message, mostly notation: pasted whole, it is still a copy
    text = "Head h must get the block of consecutive columns h*d_head:(h+1)*d_head."
    share, _, output = _graded("q1", text)
    assert share == 0 and "copied" in output, output


def test_a_finding_every_student_reports_in_the_hand_outs_numbers_is_not_a_copy():
    text = "They differ: head 0 spreads over tokens 2 and 3, head 1 is all on token 4."
    share, _, output = _graded("q3", text)
    assert share == 1 and "copied" not in output, output


# ------------------------------------------------------------------ words and notation
def test_matrices_and_matrix_share_a_stem():
    assert stem("matrices") == stem("matrix")


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q2", "1h = 2h = 256 = 4 x 8 x 8. Splitting heads = reshape only."),
        ("q4", "softmax count: 1 -> h. dims each: d_model -> d_model/h."),
        ("q4", "Going from 1 to 4 heads gives 4 softmaxes instead of 1, each over d_model/4 dims."),
        ("q1", "Shared Wq/Wk/Wv; per-head slices; no per-head weights."),
    ],
)
def test_terse_notation_states_the_ideas(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1 and not flagged, output


def test_the_module_key_still_earns_full_marks_through_grade_written():
    from mha_grader.written.agreement import DATA

    results = grade_written((DATA / "written_module_key.md").read_text(encoding="utf-8"))
    assert all(r.score == r.max_score for r in results)


@pytest.mark.parametrize(
    "text",
    [
        "its a misconseption that each head has its own Wq. they all share one Wq, Wk, Wv and "
        "split the output",
        "i never beleived that heads have their own matrices; they share one Wq, Wk, Wv and "
        "slice Q, K, V.",
        "contary to popular belief no head has its own Wq: one shared Wq, Wk, Wv, and each head "
        "takes a slice of the output.",
    ],
)
def test_a_misspelt_disavowal_cue_still_disowns_the_idea_it_governs(text):
    share, _, output = _graded("q1", text)
    assert share == 1, output


# ------------------------------------------------ round 3: others' findings, the material's parts
def test_what_other_people_found_is_theirs_not_the_students_finding():
    own, _, _ = _graded("q2", "Both had 256 parameters, since every matrix is d_model x d_model.")
    theirs, _, output = _graded(
        "q2", "My friends got 256 for both, since every matrix is d_model x d_model."
    )
    assert own == 1.0
    assert theirs <= 0.5, output


def test_everyone_getting_an_equal_share_is_no_report():
    # "got" is what others found; "gets" is no report
    (frames,) = _frames("Everyone gets an equal number of features.", "q5")
    assert frames["number"] is Frame.ASSERTED
    (frames,) = _frames("Everyone got an equal number of parameters.", "q5")
    assert frames["number"] is Frame.REPORTED


def test_a_part_of_the_notebook_cited_with_an_adverb_is_still_cited():
    share, _, output = _graded(
        "q3", "The notebook plots apparently show a different pattern in each head."
    )
    assert 0 < share <= 0.5, output
    assert "counts half" in output


def test_not_at_all_answering_a_question_fragment_denies_it():
    share, flagged, output = _graded(
        "q3", "Same pattern? Not at all: head 0 looked at tokens 1 and 2 while head 1 looked at 3."
    )
    assert share == 1.0 and not flagged, output


def test_a_notes_label_and_value_are_one_claim():
    share, _, output = _graded(
        "q4", "- softmaxes: one per head\n- width of each: d_model/h\n- weights: unchanged"
    )
    assert share == 1.0, output


def test_a_doubt_before_a_colon_is_no_label():
    share, _, output = _graded(
        "q3",
        "Some say the heads give different patterns. I doubt it: same input, so the same pattern.",
    )
    assert share <= 0.25, output
