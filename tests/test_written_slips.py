"""Issue 21 round 3: right answers written the way notes are: slips in longer words (two letters
swapped, a plural misspelt) and a note's abbreviations ("indep.", "dims", "#params"). The
examples are in words of their own, not the labelled sets'."""

from __future__ import annotations

import pytest
from written_support import share as _share

from mha_grader.written.match import small_typo
from mha_grader.written.text import split_sentences


# ------------------------------------------------------------------------------ slips
@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("matrcies", "matrices"),  # two letters swapped
        ("seperate", "separate"),  # the usual one
        ("paramters", "parameters"),
        ("sofmtax", "softmax"),
        ("projeciton", "projection"),  # swapped and long
        ("projecitons", "projection"),  # swapped, and the plural's s: two slips in a long word
    ],
)
def test_a_slip_or_two_in_a_longer_word_is_the_word(written, meant):
    assert small_typo(written, meant)


@pytest.mark.parametrize(
    ("written", "meant"),
    [("shape", "share"), ("casual", "causal"), ("heads", "heaps"), ("weights", "heights")],
)
def test_short_real_words_a_slip_apart_stay_different_words(written, meant):
    assert not small_typo(written, meant)


@pytest.mark.parametrize(
    ("qid", "spelt", "slipped"),
    [
        (
            "q1",
            "one common set of projections, cut up per head; no separate matrices",
            "one common set of porjections, cut up per head; no seperate matrcies",
        ),
        (
            "q4",
            "the number of independent softmaxes grows and each covers fewer dimensions",
            "the number of indpeendent softmaxes grows and each covers fewer dimesnions",
        ),
    ],
)
def test_an_answer_with_swapped_letters_scores_as_spelt(qid, spelt, slipped):
    assert _share(qid, spelt) == 1.0
    assert _share(qid, slipped) == _share(qid, spelt)


# ---------------------------------------------------------------------- abbreviations
@pytest.mark.parametrize(
    ("qid", "written", "meant"),
    [
        (
            "q2",
            "Both 256. The shapes are indep. of the head count.",
            "Both 256. The shapes are independent of the head count.",
        ),
        (
            "q2",
            "Same number of params (256) b/c the projs keep their shape for any h.",
            "Same number of parameters (256) because the projections keep their shape for any h.",
        ),
        (
            "q4",
            "h softmaxes instead of 1, each on smaller dims.",
            "h softmaxes instead of 1, each on smaller dimensions.",
        ),
        (
            "q1",
            "One Wq/Wk/Wv for all heads & each head takes its own cols of Q, K, V.",
            "One Wq/Wk/Wv for all heads and each head takes its own columns of Q, K, V.",
        ),
    ],
)
def test_a_notes_abbreviations_score_as_the_words_they_stand_for(qid, written, meant):
    assert _share(qid, meant) >= 0.75
    assert _share(qid, written) == _share(qid, meant)


def test_a_quantity_then_up_or_down_in_a_note_is_a_change_of_amount():
    written = "#softmaxes up, width per head down."
    meant = "The number of softmaxes increases, the width per head decreases."
    assert _share("q4", meant) == 1.0
    assert _share("q4", written) == _share("q4", meant)


@pytest.mark.parametrize("verb", ["split up", "broken down", "add up", "cut down"])
def test_a_verbs_up_or_down_is_no_change_of_amount(verb):
    from mha_grader.written.text import rewrite

    assert rewrite(f"the features are {verb}.") == f"the features are {verb}."


@pytest.mark.parametrize(
    ("qid", "spelt", "slipped"),
    [
        (
            "q5",
            "d_model must be divisible by num_heads, so each head gets an equal chunk.",
            "d_model must be divisble by num_heads, so each head gets an equal chunk.",
        ),
        (
            "challenge",
            "One head can not attend to several relationships simultaneously.",
            "One head can not attend to several relationships simultaniously.",
        ),
    ],
)
def test_a_slip_in_a_word_of_a_rubric_phrase_still_folds_the_phrase(qid, spelt, slipped):
    assert _share(qid, spelt) > 0
    assert _share(qid, slipped) == _share(qid, spelt)


def test_a_real_word_near_a_phrase_word_is_left_as_written():
    from mha_grader.written.rubric import load_rubrics

    tokens = load_rubrics()["q5"].normaliser.tokens("multiply d_model by num_heads")
    assert "divisibleby" not in [t.word for t in tokens]


@pytest.mark.parametrize(
    ("written", "meant", "same"),
    [
        ("devided", "divided", True),  # one vowel for another
        ("sofmtax", "softmax", True),  # two letters swapped
        ("assured", "assumed", False),  # a consonant slip in a 7-letter word makes another word
        ("compile", "compute", False),
    ],
)
def test_a_seven_letter_word_takes_a_swap_or_a_vowel_slip_only(written, meant, same):
    assert small_typo(written, meant) is same


def test_a_slip_in_a_stance_cue_word_is_the_cue():
    spelt = "d_model must be divisible by num_heads, otherwise heads can't get equal chunks."
    slipped = "d_model must be divisible by num_heads, othewise heads can't get equal chunks."
    assert _share("q5", spelt) == 1.0
    assert _share("q5", slipped) == 1.0


@pytest.mark.parametrize(
    ("qid", "written", "meant"),
    [
        (
            "q4",
            "n_softmax = h (was 1); width of each = d_model/h (was d_model).",
            "The number of softmaxes goes from 1 to h; the width of each from d_model to "
            "d_model/h.",
        ),
        (
            "q5",
            "d_model = m * num_heads for some integer m.",
            "d_model is an integer multiple of num_heads.",
        ),
    ],
)
def test_a_notes_variables_products_and_changes_read_as_words(qid, written, meant):
    assert _share(qid, meant) >= 0.75
    assert _share(qid, written) == _share(qid, meant)


def test_a_number_times_d_model_is_left_as_written():
    from mha_grader.written.text import rewrite

    assert rewrite("4 * d_model extra numbers") == "4 * d_model extra numbers"


@pytest.mark.parametrize(
    "text",
    [
        "Both are 256. Because the size of matrix Wq, Wk, Wv, Wo is not depend on number of "
        "head, only the output is divided to the heads.",
        "Both are 256, the matrices not depends on number of head.",
    ],
)
def test_a_non_native_not_depend_on_the_head_count_is_the_reason(text):
    assert _share("q2", text) == 1


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Each head gets d_model/h dims. No head has its own mtxs. They share one.", 3),
        ("Same count, approx. 256 params. Heads are a reshape.", 2),
        ("Fewer dims. per head, the same mtxs. (d_model x d_model) in both.", 1),
    ],
)
def test_an_abbreviations_full_stop_ends_its_sentence_before_a_capital(text, sentences):
    assert len(split_sentences(text)) == sentences
