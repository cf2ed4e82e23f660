"""Text copied from what students were handed earns nothing, and the feedback says where it
came from (issue 21). The grader knows the hand-outs from a snapshot, kept equal to
exercises/ by a test here."""

from __future__ import annotations

import json

import pytest

from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, grade_answer
from mha_grader.written.copies import find_copies
from mha_grader.written.rubric import load_rubrics
from mha_grader.written.sources import SNAPSHOT, Handout, read_handouts, snapshot_text


def _graded(qid: str, text: str) -> tuple[float, bool, str]:
    result = grade_answer(qid, text)
    return result.score / POINTS[qid], NEEDS_REVIEW in result.tags, result.output


def test_the_snapshot_holds_what_exercises_hands_out():
    assert SNAPSHOT.read_text(encoding="utf-8") == snapshot_text(read_handouts()), (
        "the hand-outs changed: python -m mha_grader.written.sources --write"
    )


def test_every_kind_of_hand_out_is_read():
    handouts = read_handouts()
    sources = {h.source for h in handouts}
    assert {"README.md", "lab.ipynb", "multihead.py", "crosscheck.py"} <= sources
    assert any(s.startswith("tests/") for s in sources)
    assert "answers.md" not in sources  # the questions: a rubric's prompt reads them
    text = {h.source: h.text for h in handouts}
    # the notebook's markdown and its code's comments, a docstring, a public test's message
    assert "Same input, same projections" in text["lab.ipynb"]
    assert "the module's worked example" in text["lab.ipynb"]
    assert "cuts the feature" in text["multihead.py"]
    assert "splitting into heads is a reshape" in text["tests/parameter_counts.py"]


def test_the_hand_outs_are_read_from_their_folder(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "README.md").write_text("# Title\n\nHeads **share** one projection.\n")
    (tmp_path / "lab.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1  # a comment here\n"]}]})
    )
    (tmp_path / "tests" / "t.py").write_text('assert x, f"the value {x} is wrong"\n')
    found = {h.source: h.text for h in read_handouts(tmp_path)}
    assert "Heads share one projection." in " ".join(found["README.md"].split())
    assert "*" not in found["README.md"] and "#" not in found["README.md"]
    assert found["lab.ipynb"] == "a comment here"
    assert "is wrong" in found["tests/t.py"]


@pytest.mark.parametrize(
    ("qid", "text", "source"),
    [
        (
            "q2",
            "Splitting into heads happens after the projections, so look at which matrices the "
            "module holds and whether their shapes depend on the number of heads.",
            "the lab notebook",
        ),
        (
            "q3",
            "The module printed token 0's rows: head 0 splits its attention between tokens 2 and "
            "3, head 1 puts all of it on token 4. Same input, same projections: only the slice of "
            "features each head sees differs.",
            "the lab notebook",
        ),
        (
            "q1",
            "Multi-head attention projects Q, K and V once at full d_model and then cuts the "
            "feature axis into num_heads equal chunks, one per head.",
            "multihead.py",
        ),
        (
            "q5",
            "A head count that does not divide d_model cannot split the features into equal "
            "chunks.",
            "the lab notebook",
        ),
        (
            "q4",
            "confirm that more heads cost no extra parameters and attend to different things",
            "README",
        ),
    ],
)
def test_a_pasted_hand_out_earns_nothing_and_the_feedback_names_it(qid, text, source):
    share, _, output = _graded(qid, text)
    assert share == 0, output
    assert "copied from" in output and source in output
    assert "Recognised" not in output


def test_a_short_sentence_pasted_beside_a_copy_is_copied_too():
    text = (
        "My parameter_counts next to what torch.nn.MultiheadAttention reports for the same "
        "settings, for 1, 2, 4 and 8 heads. Yours match torch's everywhere."
    )
    share, _, output = _graded("q2", text)
    assert share == 0, output
    assert '"Yours match torch' in output


def test_a_short_sentence_of_ones_own_beside_a_copy_still_counts():
    text = (
        "Splitting into heads happens after the projections, so look at which matrices the "
        "module holds. Both counts were 256."
    )
    share, _, output = _graded("q2", text)
    assert share == 0.5, output


def test_a_question_asked_beside_a_copy_is_no_copy():
    copies = find_copies(
        load_rubrics()["q3"],
        load_rubrics()["q3"].normaliser.sentences(
            "Same pattern? Not at all: head 0 splits its attention between tokens 2 and 3, "
            "head 1 puts all of it on token 4."
        ),
    )
    assert [c.sentence for c in copies] == [1]


@pytest.mark.parametrize(
    ("qid", "heading"),
    [
        ("q2", "More heads, the same number of parameters"),
        ("q3", "Different heads attend to different things"),
    ],
)
def test_a_hand_outs_heading_pasted_as_the_answer_earns_nothing(qid, heading):
    share, _, output = _graded(qid, heading)
    assert share == 0, output
    assert "copied from the lab notebook" in output


def test_a_short_answer_in_words_of_ones_own_is_no_heading():
    share, _, output = _graded("q3", "Different heads attend to different tokens.")
    assert share > 0, output


def test_small_edits_do_not_hide_a_copy():
    text = (
        "q, k and v are projected once at the full d_model and then the feature axis is cut into "
        "num_heads equal chunks - one per head."
    )
    assert _graded("q1", text)[0] == 0


def test_only_the_copied_part_earns_nothing():
    own = "I found 256 for both, because each head only slices the output of the same matrices."
    copied = (
        " Splitting into heads happens after the projections, so look at which matrices the "
        "module holds and whether their shapes depend on the number of heads."
    )
    alone, _, _ = _graded("q2", own)
    together, _, output = _graded("q2", own + copied)
    assert together == alone == 1
    assert "copied from the lab notebook" in output


@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q5", "d_model must be divisible by num_heads."),
        ("q2", "The weight matrices are d_model x d_model whatever the number of heads."),
        (
            "q3",
            "That they can be, and in the verified example were, genuinely different: head 0 "
            "split its attention between tokens 2 and 3, while head 1 put 100% of its weight on "
            "token 4, for the exact same query token and input.",
        ),
    ],
)
def test_short_common_phrases_and_own_sentences_are_no_copies(qid, text):
    rubric = load_rubrics()[qid]
    assert find_copies(rubric, rubric.normaliser.sentences(text)) == []


def test_without_a_snapshot_nothing_is_a_copy():
    rubric = load_rubrics()["q2"]
    sentences = rubric.normaliser.sentences("Splitting into heads happens after the projections.")
    assert find_copies(rubric, sentences, handouts=()) == []
    handout = Handout("x.md", "x", "Splitting into heads happens after the projections, so look.")
    assert find_copies(rubric, sentences, handouts=(handout,))


@pytest.mark.parametrize("qid", sorted(load_rubrics()))
def test_the_hand_outs_lines_read_in_one_pass_are_what_reading_them_line_by_line_gives(qid):
    """A pasted heading is found among the hand-outs' lines, read in one pass for speed (each
    line made a paragraph): the same sentences as reading every line alone, for every rubric."""
    from mha_grader.written import copies

    rubric, handouts = load_rubrics()[qid], copies.load_handouts()
    one_by_one: dict[tuple[str, ...], str] = {}
    for handout in handouts:
        for line in handout.text.splitlines():
            for sentence in rubric.normaliser.sentences(line):
                stems = tuple(stem for _, stem in copies._content(sentence))
                if len(stems) >= copies.MIN_LINE and not sentence.question:
                    one_by_one.setdefault(stems, handout.name)
    assert copies._lines(rubric, handouts) == one_by_one


def test_the_stored_readings_of_the_hand_outs_are_a_fresh_reading():
    """handouts_index.json.gz spares each process the reading; it must be what reading gives
    (after changing a hand-out, a rubric or the reading code: python -m
    mha_grader.written.refresh)."""
    import gzip
    import json

    from mha_grader.written import copies, handout_index

    stored = json.loads(gzip.decompress(handout_index.INDEX.read_bytes()))
    assert stored["key"] == handout_index.key(), "stale: python -m mha_grader.written.refresh"
    fresh = handout_index.build(copies.read_sentences, copies.read_lines)
    assert stored == json.loads(json.dumps(fresh))


def test_readings_stored_under_another_key_are_not_used(monkeypatch):
    from mha_grader.written import copies, handout_index

    rubric, handouts = load_rubrics()["q1"], copies.load_handouts()
    assert handout_index.stored_sentences(rubric, handouts) is not None
    monkeypatch.setattr(handout_index, "key", lambda: "an edited rubric's")
    handout_index._stored.cache_clear()
    try:
        assert handout_index.stored_sentences(rubric, handouts) is None
        assert handout_index.stored_lines(rubric, handouts) is None
        # nor for hand-outs or a rubric of a test's own
        monkeypatch.undo()
        handout_index._stored.cache_clear()
        own = tuple(list(copies.load_handouts()))  # equal, but not the snapshot it reads
        assert handout_index.stored_sentences(rubric, own) is None
    finally:
        handout_index._stored.cache_clear()
