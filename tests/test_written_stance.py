"""The student's stance towards what a written answer says (issue 21): only what the student
asserts earns points or costs them. Ideas reported as someone else's, disowned, doubted or only
supposed are not the student's claims; what would happen otherwise names the idea at stake;
hedged claims count; a negation reaches only its own clause."""

from __future__ import annotations

import pytest
from written_support import graded as _graded
from written_support import word_frames

from mha_grader.written import grade_answer
from mha_grader.written.rubric import load_rubrics
from mha_grader.written.stance import Frame, interrogative


def _frames(text: str, qid: str = "q5") -> list[dict[str, Frame]]:
    return word_frames(text, qid)


# ------------------------------------------------------------------------------ the grammar
@pytest.mark.parametrize(
    "text",
    [
        "Some people claim the heads share projections.",
        "A friend told me the heads share projections.",
        "The team argues that the heads share projections.",
        "You might think that the heads share projections.",
        "It is often said that the heads share projections.",
        "According to some, the heads share projections.",
        "The heads share projections, some say.",
    ],
)
def test_an_idea_attributed_to_someone_else_is_reported(text):
    assert _frames(text)[0]["share"] is Frame.REPORTED


@pytest.mark.parametrize(
    "text",
    [
        "It is false that the heads share projections.",
        "It's wrong to say the heads share projections.",
        "A common myth says the heads share projections.",
        "Ignore anyone who says the heads share projections.",
        "I doubt that the heads share projections.",
        "I don't think the heads share projections.",
        "I never believed that the heads share projections.",
        "The heads share projections, which is false.",
        "The heads share projections — not true.",
    ],
)
def test_a_disowned_idea_is_denied(text):
    assert _frames(text)[0]["share"] is Frame.DENIED


@pytest.mark.parametrize(
    "verdict",
    ["That is false.", "That's a myth.", "I never believed it.", "Not true.", "They are wrong."],
)
def test_a_verdict_sentence_denies_the_claim_before_it_and_claims_nothing(verdict):
    first, second = _frames(f"Some claim the heads share projections. {verdict}")
    assert first["share"] is Frame.DENIED
    assert set(second.values()) == {Frame.CUE}


@pytest.mark.parametrize("verdict", ["That is true.", "They're right.", "I agree."])
def test_an_endorsement_makes_a_reported_idea_the_students(verdict):
    first, _ = _frames(f"Some claim the heads share projections. {verdict}")
    assert first["share"] is Frame.ASSERTED


def test_a_myth_disowned_twice_stays_denied():
    first, _ = _frames("A common myth says the heads share projections. I never believed it.")
    assert first["share"] is Frame.DENIED


def test_the_students_own_voice_resumes_after_a_contrast_or_a_colon():
    text = "Some claim the heads own matrices, but actually they share projections."
    (frames,) = _frames(text)
    assert frames["own"] is Frame.REPORTED and frames["share"] is Frame.ASSERTED
    (frames,) = _frames("Ignore anyone who says heads own matrices: they share projections.")
    assert frames["own"] is Frame.DENIED and frames["share"] is Frame.ASSERTED


@pytest.mark.parametrize(
    "text",
    [
        "Maybe the heads share projections, maybe not.",
        "The heads share projections, or maybe not.",
        "The heads share projections or not, I can't tell.",
    ],
)
def test_an_idea_left_open_is_neither_claimed_nor_denied(text):
    assert _frames(text)[0]["share"] is Frame.REPORTED


@pytest.mark.parametrize(
    "text",
    [
        "I wonder whether the heads share projections.",
        "Not sure if the heads share projections.",
        "It's unclear whether the heads share projections.",
        "I can't tell if the heads share projections.",
        "I have no idea whether the heads share projections.",
        "Who knows if the heads share projections.",
    ],
)
def test_an_idea_asked_about_in_a_statement_is_left_open(text):
    assert _frames(text)[0]["share"] is Frame.REPORTED


def test_not_sure_about_something_else_leaves_the_claim_after_it_the_students():
    (frames,) = _frames("I'm not sure if I remember right, but the heads share projections.")
    assert frames["share"] in (Frame.ASSERTED, Frame.HEDGED)


def test_whether_or_not_leaves_nothing_open():
    (frames,) = _frames("The heads share projections whether or not bias is on.")
    assert frames["share"] is Frame.ASSERTED


def test_a_finding_left_open_earns_nothing():
    text = "Maybe the count is the same, maybe not, I'm not sure; I did not manage to run it."
    share, _, output = _graded("q2", text)
    assert share == 0, output


@pytest.mark.parametrize(
    ("text", "frame"),
    [
        ("The lecture showed that they differ: head 0 attends to token 2.", Frame.CITED),
        ("My TA said they differ: head 0 attends to token 2.", Frame.REPORTED),
        ("The notebook says they differ: in my run head 0 attends to token 2.", Frame.ASSERTED),
        ("My TA said they differ, and she was right: head 0 attends to token 2.", Frame.ASSERTED),
        ("The team's claim that they differ is wrong: head 0 attends to token 2.", Frame.ASSERTED),
    ],
)
def test_what_a_colon_adds_to_someone_elses_idea_is_theirs_unless_the_student_speaks(text, frame):
    (frames,) = _frames(text, "q3")
    assert frames["attends"] is frame


def test_a_finding_cited_from_the_lecture_with_its_evidence_earns_half():
    text = "The lecture showed that they differ: head 0 split between tokens 2 and 3, head 1 on 4."
    share, _, output = _graded("q3", text)
    assert share == 0.5, output


@pytest.mark.parametrize(
    "text",
    [
        "I think the heads share projections.",
        "Maybe the heads share projections.",
        "The heads probably share projections.",
        "The heads share projections, I'm not sure.",
        "The heads share projections?",
    ],
)
def test_a_hedged_idea_is_still_claimed(text):
    assert _frames(text)[0]["share"] is Frame.HEDGED


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Do the heads share projections?", True),
        ("Look at Wq: which of its shapes depends on num_heads?", True),
        ("The heads share projections, right?", False),
        ("I think it's the same, maybe?", False),
    ],
)
def test_a_question_asks_a_statement_with_a_question_mark_guesses(text, asks):
    words = [t.word for t in load_rubrics()["q5"].normaliser.sentences(text)[0].tokens]
    assert interrogative(words) is asks


def test_a_question_answered_no_is_denied():
    first, second = _frames("Does each head own matrices? No.")
    assert first["own"] is Frame.DENIED and set(second.values()) == {Frame.CUE}


@pytest.mark.parametrize(
    "text",
    [
        "If each head had its own matrices, the count would double.",
        "The count would double if each head had its own matrices.",
        "If each head had its own matrices the count would double.",
    ],
)
def test_a_condition_is_supposed_and_so_is_what_it_would_lead_to(text):
    # "the count would double" is what the supposition would lead to, in the conditional mood:
    # a prediction, not the student's claim (reading.py dropped it only after a wrong condition)
    (frames,) = _frames(text, "q2")
    assert frames["own"] is Frame.SUPPOSED
    assert frames["double"] is Frame.SUPPOSED


@pytest.mark.parametrize(
    "text",
    [
        "If the heads share one Wq, each head gets a slice of Q.",
        "If you split Q into heads, each head gets a slice of it.",
    ],
)
def test_a_consequence_in_the_indicative_is_asserted(text):
    (frames,) = _frames(text, "q1")
    assert frames["slice"] is Frame.ASSERTED


@pytest.mark.parametrize(
    "text",
    [
        "num_heads must divide d_model, otherwise the features can't be split equally.",
        "num_heads must divide d_model, else the features can't be split equally.",
        "num_heads must divide d_model; if not, the features can't be split equally.",
        "If num_heads does not divide d_model, the features can't be split equally.",
        "Unless num_heads divides d_model, the features can't be split equally.",
        "num_heads must divide d_model. Without that, the features can't be split equally.",
    ],
)
def test_what_breaks_without_a_requirement_is_what_would_happen_otherwise(text):
    assert _frames(text)[-1]["features"] is Frame.OTHERWISE


@pytest.mark.parametrize(
    "hedge", ["If I'm not mistaken,", "If I understood correctly,", "As far as I can tell,"]
)
def test_a_hedge_opened_by_if_is_no_condition(hedge):
    (frames,) = _frames(f"{hedge} the heads share projections.")
    assert frames["share"] is Frame.HEDGED and frames["if" if "If" in hedge else "as"] is Frame.CUE


# -------------------------------------------------------------------- what grading makes of it
DISOWNED_RIGHT_IDEAS = [
    (
        "q2",
        "A common myth says the parameter count stays the same, 256 for both, since Wq, Wk, Wv "
        "and Wo are d_model x d_model and splitting is only a reshape. I never believed it.",
    ),
    ("q2", "It is false that the parameter count is the same for one and two heads."),
    ("q1", "Some claim the heads share one Wq, Wk, Wv and slice its output. That is false."),
    ("q3", "Ignore anyone who says different heads give different patterns for a token."),
    ("q4", "It's wrong to say more heads give more independent softmaxes over smaller subspaces."),
    ("q5", "I doubt that d_model must be divisible by num_heads."),
    (
        "challenge",
        "Some argue one head loses the ability to attend to several relationships at once. "
        "Nonsense.",
    ),
]


@pytest.mark.parametrize(("qid", "text"), DISOWNED_RIGHT_IDEAS)
def test_a_disowned_right_idea_earns_nothing(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share <= 0.25 or flagged, output
    assert share <= 0.5
    assert "Every idea this question asks about is there" not in output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q1",
            "Some think each head has its own projection matrices. That's false: one Wq, Wk and "
            "Wv work at full width and their output is split into chunks, one per head.",
        ),
        (
            "q2",
            "People say two heads add parameters, but both gave 256: the matrices are d_model "
            "x d_model whatever num_heads is.",
        ),
        (
            "q3",
            "It's a myth that heads agree for the same token: head 0 weighted tokens 2 and 3, "
            "head 1 token 4.",
        ),
        (
            "q4",
            "I never believed heads see fewer tokens; there are more independent softmaxes, "
            "each over a smaller subspace.",
        ),
    ],
)
def test_disowning_a_wrong_idea_and_saying_the_right_one_earns_the_points(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share >= 0.75 and not flagged, output
    assert "Re-check" not in output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q2", "Some people say the count is the same for one and two heads."),
        ("q5", "People say d_model should be divisible by num_heads."),
        ("q3", "They say different heads look at different tokens."),
    ],
)
def test_an_idea_only_reported_earns_nothing(qid, text):
    share, _, output = _graded(qid, text)
    assert share == 0, output
    assert "Recognised" not in output


def test_an_idea_only_reported_costs_nothing_either():
    share, flagged, output = _graded(
        "q4",
        "Some people think each head sees fewer tokens. More independent softmaxes, each "
        "over a smaller subspace.",
    )
    assert share == 1 and not flagged and "Re-check" not in output


@pytest.mark.parametrize(
    "text",
    [
        "d_model has to be divisible by num_heads (d_model % num_heads == 0). Otherwise the "
        "features can't be cut into equal chunks and d_head = d_model / num_heads would not be a "
        "whole number.",
        "num_heads must divide d_model, else d_head is not an integer and the heads would get "
        "unequal slices.",
        "d_model must be a multiple of num_heads, because if it isn't, the heads can't all get "
        "the same number of features.",
        "If num_heads doesn't divide d_model, the features can't be split evenly, so it has to "
        "divide it.",
        "Unless d_model % num_heads == 0, the split into equal heads fails.",
        "The constraint is d_model % num_heads == 0; if that fails, the heads get unequal chunks.",
    ],
)
def test_a_constraint_and_what_breaks_without_it_earns_full_marks(text):
    share, flagged, output = _graded("q5", text)
    assert share == 1 and not flagged, output
    assert "Re-check" not in output


def test_what_would_happen_otherwise_names_the_idea_in_either_direction():
    # the challenge's "otherwise" is the single head's case itself
    text = (
        "With 8 heads each token gets 8 independent attention patterns over smaller subspaces, so "
        "it can follow several relationships at once; otherwise a single softmax has to mix them "
        "all. Equal parameter count does not mean equal capability."
    )
    share, flagged, output = _graded("challenge", text)
    assert share == 1 and not flagged, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "The count stayed at 256. If each head had its own Wq, Wk and Wv, two heads would "
            "need twice as many, but the heads just cut up the output of the same projections.",
        ),
        (
            "q1",
            "If every head had separate projection matrices we would see more parameters with "
            "more heads. We don't: there's a single Wq/Wk/Wv and its output is sliced into heads.",
        ),
    ],
)
def test_reasoning_from_a_wrong_supposition_costs_nothing(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share == 1 and not flagged, output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q2",
            "I think it's the same, maybe? 256 and 256, because the matrices are d_model x "
            "d_model whatever num_heads is.",
        ),
        ("q3", "I think they're different, maybe? head 0 was on tokens 2 and 3, head 1 on 4"),
        ("q5", "d_model divisible by num_heads? so each head gets the same number of features"),
    ],
)
def test_a_hedged_right_answer_is_credited(qid, text):
    share, flagged, output = _graded(qid, text)
    assert share >= 0.75 and not flagged, output


def test_an_idea_given_only_as_a_guess_counts_and_the_feedback_says_so():
    share, flagged, output = _graded("q2", "I think it's the same, maybe?")
    assert share == 0.5 and not flagged
    assert "as a guess" in output
    assert "as a guess" not in _graded("q2", "It's the same.")[2]


def test_a_hedged_wrong_answer_is_still_wrong():
    share, _, output = _graded("q2", "maybe two heads have more parameters?")
    assert share == 0
    assert "Re-check" in output


def test_a_real_question_claims_nothing():
    assert _graded("q2", "Is the parameter count the same for one and two heads?")[0] == 0


def test_a_question_answered_after_it_is_a_claim():
    assert (
        _graded(
            "q5", "Must d_model be divisible by num_heads? Yes, so each head gets an equal chunk."
        )[0]
        == 1
    )
    assert _graded("q5", "Must d_model be divisible by num_heads? No.")[0] == 0


def test_a_negation_does_not_reach_into_the_next_clause_with_a_subject_of_its_own():
    # "can't" belongs to the first clause; the second says d_head would not be whole
    text = (
        "num_heads must divide d_model. Otherwise the features can't be cut into equal chunks "
        "and d_head would not be a whole number."
    )
    assert _graded("q5", text)[0] == 1


def test_what_someone_else_says_ends_where_a_clause_of_the_students_own_begins():
    (frames,) = _frames(
        "It's wrong to think any number of heads works, num_heads must divide d_model."
    )
    assert frames["works"] is Frame.DENIED and frames["divides"] is Frame.ASSERTED
    # a comma inside the reported idea does not end it
    (frames,) = _frames(
        "A myth says the count stays the same, 256 for both, since it is a reshape.", "q2"
    )
    assert frames["reshape"] is Frame.DENIED


def test_or_after_a_requirement_is_what_would_happen_otherwise():
    (frames,) = _frames("num_heads has to divide d_model or the heads won't get equal chunks.")
    assert frames["chunks"] is Frame.OTHERWISE and frames["divides"] is Frame.ASSERTED
    (frames,) = _frames("The heads share Wq or Wk.")
    assert frames["wk"] is Frame.ASSERTED


@pytest.mark.parametrize(
    "text",
    [
        "If the head count changed a shape, the totals would differ; they didn't.",
        "If the head count changed a shape, the totals would differ. It doesn't.",
    ],
)
def test_a_condition_denied_after_it_supposes_its_consequence(text):
    assert _frames(text, "q2")[0]["differ"] is Frame.SUPPOSED


def test_a_belief_given_up_is_reported():
    (frames,) = _frames("At first I thought each head has separate matrices, but they share Wq.")
    assert frames["separate"] is Frame.REPORTED and frames["share"] is Frame.ASSERTED


def test_a_negation_does_not_reach_into_an_embedded_question():
    text = (
        "The parameter count is identical, but that number doesn't capture how many independent "
        "patterns a token can have."
    )
    output = grade_answer("challenge", text).output
    assert "Re-check" not in output
