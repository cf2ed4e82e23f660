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
