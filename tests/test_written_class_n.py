"""Issue 21, set N seen: its misses handled as classes, in words of their own, not the labelled
set's: what a supposition requires ("if instead ..., the heads must ...", "provided ..., d_model
has to ...") holds only if the supposition does, so is supposed like a prediction; a real
question answered by a "no" in more words ("Of course not.") is answered no; a second part that
takes the first back ("they attend to the same thing", "nothing changes except the names") is
read, so the pair is flagged; "capability follows from the parameters" is the team's argument;
the softmax count as a product, and a width before "each softmax" no count; the same total worked
out for each head count; "any num_heads works, the last head is padded" charged in every
question; "it's a common mistake to think X" disowns X; what others repeat is reported; a shape
in brackets between words ("the same 4 (8, 8) matrices") is part of its clause."""

from __future__ import annotations

import pytest
from written_support import graded as _graded


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "If every head owned a Wq, Wk and Wv, the layer would get bigger with more heads. If "
            "on the other hand a single projection at full d_model is shared, each head must "
            "receive an equal piece of what it outputs.",
        ),
        (
            "q5",
            "Provided that the heads truly receive equal chunks of the features, num_heads has "
            "to divide d_model.",
        ),
    ],
)
def test_what_a_supposition_requires_is_supposed_too(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert share <= 0.25 and not flagged


def test_a_requirement_stated_outright_beside_a_supposition_keeps_its_points():
    share, _, _ = _graded(
        "q5",
        "d_model has to be divisible by num_heads, because each head gets an equal chunk of "
        "d_model/num_heads features; if it were not, the reshape would fail.",
    )
    assert share == 1.0


@pytest.mark.parametrize(
    "reply",
    ["Of course not.", "Obviously not, why would anyone build two of them?", "Clearly not."],
)
def test_a_real_question_answered_by_a_no_in_more_words_is_answered_no(reply):
    share, flagged, _ = _graded(
        "q3",
        f"Do the two heads produce the same pattern? {reply} For token 0 head 0 weighted tokens 2 "
        "and 3. Head 1 put everything on token 4.",
    )
    assert share == 1.0 and not flagged


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q3",
            "For token 0 they differ: head 0 took tokens 2 and 3, head 1 took token 4. Still, "
            "both heads finally attend to the same thing, the input being shared.",
        ),
        (
            "q4",
            "Each head now runs its own softmax over d_model/num_heads features. Then again, "
            "nothing changes besides the naming.",
        ),
    ],
)
def test_a_second_part_that_takes_the_first_back_is_not_full_marks_unread(qid, text):
    share, flagged, _ = _graded(qid, text)
    assert flagged or share <= 0.5


def test_the_heads_attending_from_the_same_place_is_no_claim_that_they_agree():
    share, flagged, _ = _graded(
        "q3",
        "Like two lamps pointing from the same place at different corners: head 0 lit "
        "tokens 2 and 3, head 1 lit token 4.",
    )
    assert not flagged


def test_a_softmax_count_written_as_a_product_is_the_count():
    share, flagged, output = _graded("q4", "softmaxes x num_heads now, d_model/num_heads each")
    assert "how many attention computations there are" in output.split("\n")[0]


def test_endorsing_that_capability_follows_from_the_parameters_is_charged():
    share, flagged, _ = _graded(
        "challenge",
        "I side with the team: capability depends on the parameters, so the two layers should "
        "do about as well. Still, one head drops the eight independent softmaxes over smaller "
        "subspaces, so a token can no longer follow several patterns at once.",
    )
    assert flagged or share <= 0.5


def test_denying_that_capability_follows_from_the_parameters_is_no_charge():
    share, flagged, output = _graded(
        "challenge",
        "Capability does not depend on the parameters alone: one head drops the eight "
        "independent softmaxes over smaller subspaces, so a token can no longer follow several "
        "patterns at once, and its single softmax must serve every relationship.",
    )
    assert not flagged and "goes against" not in output


_FINDING = "what you found when you compared the two counts"


def _recognised(output: str) -> str:
    return next((line for line in output.split("\n") if line.startswith("Recognised")), "")


def test_the_same_total_worked_out_for_each_head_count_is_the_finding():
    _, _, output = _graded("q2", "h=1 -> 4 * 8 * 8 = 256 params; h=2 -> 4 * 8 * 8 = 256 params.")
    assert _FINDING in _recognised(output)


def test_different_totals_worked_out_for_each_head_count_are_not_the_finding():
    _, _, output = _graded("q2", "h=1 -> 4 * 8 * 8 = 256 params; h=2 -> 8 * 8 * 8 = 512 params.")
    assert _FINDING not in _recognised(output)


@pytest.mark.parametrize(
    "text",
    [
        "Though you can pick any num_heads you like since the library pads the final head, "
        "num_heads ought to divide d_model so the heads get equal chunks.",
        "d_model has to be divisible by num_heads, giving every head an equal chunk; padding "
        "the last head would do as well.",
    ],
)
def test_saying_the_constraint_can_be_left_out_beside_it_costs_points(text):
    share, flagged, _ = _graded("q5", text)
    assert flagged or share <= 0.5


def test_saying_any_head_count_works_costs_points_in_another_question_too():
    share, flagged, _ = _graded(
        "q1",
        "One Wq, Wk and Wv at full d_model serve every head, no head owns a matrix, and the "
        "output is cut into equal chunks, one per head; any number of heads is fine, since "
        "the final chunk gets padded.",
    )
    assert flagged or share <= 0.5


@pytest.mark.parametrize(
    "opening",
    [
        "It is a classic mistake to believe that any num_heads works.",
        "It's an easy error to assume any num_heads is fine.",
    ],
)
def test_an_adjective_before_the_mistake_still_disowns_what_follows(opening):
    share, flagged, _ = _graded(
        "q5",
        f"{opening} num_heads must divide d_model, so every head gets an equal chunk of "
        "d_model/num_heads features.",
    )
    assert share == 1.0 and not flagged


_COUNT = "how many attention computations there are"


def test_a_width_before_each_softmax_is_not_a_count_of_softmaxes():
    _, _, output = _graded(
        "q4", "At 4 heads d_head came out as 2, so each softmax only saw 2 features rather than 8."
    )
    assert _COUNT not in _recognised(output)


def test_a_count_of_softmaxes_then_what_each_sees_is_still_the_count():
    _, _, output = _graded(
        "q4", "At 8 heads there are 8 softmaxes, each seeing only d_model/8 features."
    )
    assert _COUNT in _recognised(output)


@pytest.mark.parametrize(
    "opening",
    ["Folks love to repeat that", "My friends keep repeating that", "Some people repeat that"],
)
def test_what_others_repeat_is_reported_not_claimed(opening):
    share, flagged, _ = _graded(
        "q4",
        f"{opening} eight heads give eight independent softmaxes, each over d_model/num_heads "
        "features.",
    )
    assert share <= 0.25 and not flagged


def test_the_same_matrices_with_their_shape_whatever_the_head_count_are_shared():
    _, _, output = _graded(
        "q1", "In my run the layer kept the same 4 (8, 8) weight matrices for 1 head and for 8."
    )
    assert "where the queries, keys and values are computed" in _recognised(output)
