"""Issue 21, set Q seen: its misses handled as classes, in words of their own, not the labelled
set's. Stance: a source's right answer the student then refuses to stand behind, or doubts the
point of, is not theirs; a list's commas ("one Wq, Wk and Wv") do not end a report; a sentence
opened in mockery ("Oh sure, ...") claims nothing it says; a verdict left open ("Conclusion:
???") leaves every line before it unclaimed; what a supposition "would" lead to stays supposed,
after a comma or a "so"."""

from __future__ import annotations

import pytest
from written_support import graded as _graded

_Q1 = (
    "the layer keeps a single Wq, Wk and Wv at full d_model, and Q, K and V are cut into equal "
    "chunks per head afterwards, so no head owns a projection."
)


@pytest.mark.parametrize(
    "refusal",
    [
        "I'm not putting my name to that.",
        "I wouldn't sign off on it.",
        "I would not take a chatbot's word for it.",
        "I'd need to check it in the code before I take its word for it.",
    ],
)
def test_refusing_to_stand_behind_a_reported_answer_leaves_it_unclaimed(refusal):
    share, _, _ = _graded("q1", f"A chatbot says {_Q1} {refusal}")
    assert share <= 0.25


def test_refusing_to_stand_behind_ones_own_sentence_leaves_it_unclaimed():
    share, _, _ = _graded("q1", f"The {_Q1[4:]} I'm not putting my name to that though.")
    assert share <= 0.25


def test_a_report_runs_on_past_the_commas_of_a_list():
    # "Wq, Wk and Wv" is one list: the report covers what follows it too
    share, _, _ = _graded(
        "q1",
        "My lab partner says the heads use one Wq, Wk and Wv at full d_model and then take equal "
        "slices of Q, K and V, none of them owning a matrix.",
    )
    assert share <= 0.25


_Q4 = "more heads give more independent softmaxes, one per head, each over d_model/h features."


@pytest.mark.parametrize(
    "doubt",
    [
        "Not convinced that changes anything, since the parameters are equal.",
        "I doubt it makes any difference.",
        "But I don't see why that would matter with the same weights.",
    ],
)
def test_doubting_that_what_came_before_matters_leaves_it_unclaimed(doubt):
    share, _, _ = _graded("q4", f"The lecture says {_Q4} {doubt}")
    assert share <= 0.25


def test_a_point_made_and_then_said_to_matter_stays_claimed():
    share, _, _ = _graded("q4", f"In my run {_Q4} That changes how each head attends.")
    assert share == 1.0


@pytest.mark.parametrize("opener", ["Oh sure,", "Yeah right,", "Oh, of course:"])
def test_a_sentence_opened_in_mockery_claims_nothing(opener):
    share, _, _ = _graded(
        "q3",
        f"{opener} the heads differ: head 0 on tokens 2 and 3 and head 1 on token 4, one token "
        "on one seed, and we're supposed to conclude the heads see different things.",
    )
    assert share <= 0.25


def test_mocking_a_wrong_view_leaves_the_right_one_after_it():
    share, _, _ = _graded(
        "q2",
        "Sure, because cutting a matrix in four makes it four times bigger. No: 256 with one "
        "head and 256 with four, since Wq, Wk, Wv and Wo stay d_model x d_model for any head "
        "count.",
    )
    assert share == 1.0


def test_a_sincere_of_course_is_no_mockery():
    share, _, _ = _graded(
        "q3",
        "Of course not: head 0 put token 0's weight on tokens 2 and 3, head 1 all on token 4.",
    )
    assert share == 1.0


@pytest.mark.parametrize("verdict", ["Conclusion: ???", "My answer: unclear", "Verdict: idk"])
def test_a_verdict_left_open_leaves_the_notes_before_it_unclaimed(verdict):
    share, _, _ = _graded(
        "q3",
        "Different heads, same token?\n"
        "• The notes: h0 -> tokens 2, 3 and h1 -> token 4, so the heads differ\n"
        "• My plots: too blurry to tell\n"
        f"• {verdict}",
    )
    assert share <= 0.25


def test_a_verdict_given_keeps_the_notes_claimed():
    share, _, _ = _graded(
        "q3",
        "Different heads, same token?\n"
        "• My run: h0 -> tokens 2, 3 and h1 -> token 4\n"
        "• Verdict: no, the heads differ",
    )
    assert share == 1.0


@pytest.mark.parametrize(
    "text",
    [
        # the consequence after a comma and a new subject
        "Broadly, if the heads work on different feature slices, they would likely attend "
        "differently, at least on paper. I never opened my heatmaps.",
        # a conclusion drawn in the conditional mood
        "If the notebook's numbers hold, head 0 weights tokens 2 and 3 and head 1 weights token "
        "4, so the heads would differ. I haven't rerun it, and one seed shows little.",
    ],
)
def test_what_a_supposition_would_lead_to_is_not_claimed(text):
    share, _, _ = _graded("q3", text)
    assert share <= 0.25


def test_looking_closely_is_not_patterns_being_close():
    share, _, _ = _graded("q3", "I did not look closely at the plots.")
    assert share == 0.0


# A debugging story: the first, buggy result is set aside, the fixed one is the student's.
@pytest.mark.parametrize(
    "story",
    [
        "My count_params at first printed 512 for two heads, since I had given every head its "
        "own Wq by mistake.",
        "Using my broken split_heads the two counts did not agree at all, so I couldn't say.",
        "Initially I was convinced that each head brings a Wq of its own.",
    ],
)
def test_a_first_buggy_result_set_aside_is_not_the_students_claim(story):
    share, flagged, _ = _graded(
        "q2",
        f"{story} After the fix: 256 with one head and 256 with two, because Wq, Wk, Wv and Wo "
        "are d_model x d_model whatever the head count.",
    )
    assert share == 1.0 and not flagged


def test_a_result_in_ones_own_run_is_still_claimed():
    share, _, _ = _graded(
        "q2", "My count_params printed 512 for two heads and 256 for one: heads add weights."
    )
    assert share == 0.0


def test_mine_is_the_students_own_code_not_a_person():
    share, _, _ = _graded(
        "q2",
        "Torch gives 256 for one head and for two. Mine says 256 and 256 too, since the four "
        "matrices are d_model x d_model for any head count.",
    )
    assert share == 1.0


def test_a_mistake_one_might_picture_is_denied():
    share, flagged, _ = _graded(
        "q1",
        "The classic mistake is to picture every head with a Wq of its own. There is one Wq, Wk "
        "and Wv at full width; Q, K and V are then cut into equal per-head chunks, so no head "
        "has its own matrices.",
    )
    assert share == 1.0 and not flagged


# A student's own layer: the numbers of their d_model are credited as the module's are.
def test_a_count_worked_at_ones_own_d_model_is_the_finding():
    share, flagged, _ = _graded(
        "q2",
        "I used d_model = 512 and counted 1048576 weights for one head and the same for eight: "
        "every projection stays 512 x 512 however many heads there are.",
    )
    assert share == 1.0 and not flagged


def test_the_modules_doubled_count_still_contradicts_the_finding():
    share, _, _ = _graded("q2", "With d_model = 8 I got 256 for one head and 512 for two.")
    assert share <= 0.5


@pytest.mark.parametrize("width", ["(256/4)", "of 256/4 features"])
def test_a_width_divided_by_the_head_count_in_numbers_is_the_heads_part(width):
    share, _, _ = _graded(
        "q4",
        f"With 256 and 4 heads there are 4 independent softmaxes per token instead of 1, each "
        f"working on 64-wide slices {width} instead of all 256.",
    )
    assert share == 1.0


def test_a_quotient_by_no_head_count_is_no_head_width():
    share, _, _ = _graded(
        "q4", "With 4 heads there are 4 independent softmaxes per token, with 12/3 of the rest."
    )
    assert share == 0.5


def _rechecks(output: str) -> str:
    return "\n".join(line for line in output.split("\n") if line.startswith("Re-check"))


_RIGHT = {
    "q1": "One Wq, Wk and Wv at full d_model for the whole layer, and Q, K and V are cut into "
    "equal chunks per head afterwards; no head owns a projection.",
    "q2": "256 with one head and 256 with four, since Wq, Wk, Wv and Wo stay d_model x d_model "
    "for any head count.",
    "q3": "No: for token 0 head 0 weighted tokens 2 and 3, head 1 token 4.",
    "q4": "One independent softmax per head instead of one in all, each over d_model/num_heads "
    "features instead of d_model.",
    "q5": "num_heads has to divide d_model so that every head gets an equal chunk of "
    "d_model/num_heads features.",
    "challenge": "Equal parameters are not equal capability: eight independent softmaxes over "
    "small subspaces let one token keep several patterns in one layer, where one head must "
    "squeeze every relationship into a single softmax.",
}


# A wrong idea beside right ones is charged in every question it can turn up in.
@pytest.mark.parametrize(
    ("idea", "wrong"),
    [
        (
            "whether a head has an output projection of its own",
            "Besides, every head owns a separate output projection.",
        ),
        ("which part of the input each head works with", "Which tokens go to which head differs."),
        ("how the heads are arranged in the layer", "Head 2 works as the next layer up."),
        (
            "how the heads are arranged in the layer",
            "Head 2 receives the output of the first one as its input.",
        ),
        (
            "what more heads cost in computation",
            "Also four heads need a quarter of the FLOPs of one wide head.",
        ),
        (
            "what more heads cost in computation",
            "And four heads need 4 times the FLOPs of one.",
        ),
        (
            "where the parameter count comes from",
            "The parameter count simply tracks the computation.",
        ),
    ],
)
@pytest.mark.parametrize("qid", ["q1", "q2", "q3", "q4", "q5", "challenge"])
def test_a_wrong_idea_beside_right_ones_is_charged_in_every_question(qid, idea, wrong):
    share, flagged, output = _graded(qid, f"{_RIGHT[qid]} {wrong}")
    # (q2 reads a head's own weights as going against its "why": charged as that)
    why = "why the number of heads does not change the count"
    assert idea in _rechecks(output) or (qid == "q2" and why in _rechecks(output))
    assert share <= 0.5 or flagged


@pytest.mark.parametrize(
    "right",
    [
        "The single Wo maps the concatenated heads back; each head meets only its own rows of Wo.",
        "Every token goes to every head.",
        "Each head has its own attention pattern over the tokens.",
        "The heads of the next layer see this layer's output.",
        "Each head on its own needs a quarter of the FLOPs.",
    ],
)
@pytest.mark.parametrize("qid", ["q3", "q4"])
def test_the_same_words_in_a_right_claim_are_not_charged(qid, right):
    share, flagged, output = _graded(qid, f"{_RIGHT[qid]} {right}")
    assert not _rechecks(output)
    assert share == 1.0 and not flagged


def test_a_hardware_reason_for_the_constraint_is_charged_even_as_what_would_go_wrong():
    share, _, output = _graded(
        "q5",
        "d_model must be divisible by num_heads; otherwise some cores would sit idle while the "
        "largest head finishes.",
    )
    assert "why the constraint is needed" in _rechecks(output)
    assert share <= 0.5


def test_the_right_reason_as_what_would_go_wrong_is_not_charged():
    share, _, output = _graded(
        "q5",
        "d_model must be divisible by num_heads; otherwise the heads could not get equal "
        "d_model/num_heads chunks.",
    )
    assert not _rechecks(output)
    assert share == 1.0


# The student's own run reported with its values is their evidence, not a copy of the lab's
# sentence that names the same tokens.
def test_a_report_with_its_measured_weights_is_no_copy():
    share, _, output = _graded(
        "q3",
        "No. For token 0, head 0 split its attention 0.42/0.58 between tokens 2 and 3, and head "
        "1 put all of it on token 4.",
    )
    assert share == 1.0
    assert "copied" not in output


def test_the_lab_sentence_without_values_is_still_a_copy():
    _, _, output = _graded(
        "q3",
        "The module printed token 0's rows: head 0 splits its attention between tokens 2 and 3, "
        "head 1 puts all of it on token 4.",
    )
    assert "copied" in output


# A hand-out's line pasted with its middle left out, beside a pasted table row, is copied too.
def test_a_notation_line_cut_short_beside_a_pasted_table_row_earns_nothing():
    share, _, _ = _graded(
        "q4",
        "Notation: num_heads heads of width d_head = d_model // num_heads. The same token's "
        "pattern in different heads: exercise 1, token 0's rows and the heatmaps.",
    )
    assert share == 0.0


def test_the_head_width_in_ones_own_sentence_still_counts():
    share, _, _ = _graded(
        "q4",
        "More heads give more independent softmaxes, one per head, and each head works over "
        "d_head = d_model // num_heads features instead of all of d_model.",
    )
    assert share == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "If the heads use different slices, they'd give different patterns in theory. I never "
        "checked my plots.",
        "Assuming each head sees a different slice, their patterns would differ. Never looked at "
        "mine.",
    ],
)
def test_a_contracted_or_assumed_supposition_is_not_claimed(text):
    assert _graded("q3", text)[0] <= 0.25


@pytest.mark.parametrize(
    "story",
    [
        "My first count gave 512 for two heads because I multiplied by num_heads.",
        "Initially my code printed 512 for 2 heads; I had a bug.",
    ],
)
def test_a_first_count_put_other_ways_is_set_aside(story):
    share, flagged, _ = _graded(
        "q2",
        f"{story} Fixed: 256 for both, because Wq, Wk, Wv and Wo are d_model x d_model whatever "
        "num_heads is.",
    )
    assert share == 1.0 and not flagged


@pytest.mark.parametrize(
    ("qid", "wrong", "idea"),
    [
        ("q4", "Each head also has a Wo of its own.", "output projection of its own"),
        ("q3", "The tokens are divided between the heads.", "which part of the input"),
        ("q3", "Head 1 works on what head 0 produced.", "how the heads are arranged"),
        ("q3", "The second head gets the first head's output as input.", "how the heads are"),
        ("q5", "Otherwise one head would finish earlier than the rest.", "why the constraint"),
        ("q5", "Otherwise the GPU would waste time on the uneven heads.", "why the constraint"),
    ],
)
def test_the_wrong_ideas_in_other_words_are_charged_too(qid, wrong, idea):
    share, flagged, output = _graded(qid, f"{_RIGHT[qid]} {wrong}")
    assert idea in _rechecks(output)
    assert share <= 0.5 or flagged
