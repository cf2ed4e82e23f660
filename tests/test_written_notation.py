"""Written answers in notation, in note form, and pasted questions: LaTeX and math symbols are
read as the words they stand for, a note's lines are read together where the rubric says so,
and the question copied (with or without its question mark) states nothing."""

from __future__ import annotations

import re

import pytest

from mha_check.questions import WRITTEN_QUESTIONS
from mha_grader.paths import EXERCISES
from mha_grader.points import POINTS
from mha_grader.written import NEEDS_REVIEW, RubricError, grade_answer
from mha_grader.written.language import other_language
from mha_grader.written.rubric import load_rubric, load_rubrics
from mha_grader.written.text import split_sentences


def _share(qid: str, text: str) -> float:
    result = grade_answer(qid, text)
    assert NEEDS_REVIEW not in result.tags, result.output
    return result.score / POINTS[qid]


# ------------------------------------------------------------------- LaTeX and symbols
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        (
            "q5",
            r"$h \mid d_{model}$, i.e. $d_{model} \bmod h = 0$, so each head gets $d_{model}/h$.",
        ),
        (
            "q5",
            r"$d_{model} = h \cdot d_k$ with $d_k \in \mathbb{N}$: each head gets $d_k$ features.",
        ),
        ("q5", "d_model / num_heads ∈ ℕ → every head gets an equal slice."),
        ("q5", "num_heads | d_model, so d_head = d_model/num_heads is an integer."),
        (
            "q1",
            r"Once: $Q = XW_Q$ with $W_Q \in \mathbb{R}^{d \times d}$ shared by all heads; head "
            r"$j$ takes columns $j d_h$ to $(j+1) d_h$. No head has its own $W^Q$.",
        ),
        (
            "q4",
            r"One $\mathrm{softmax}$ over $d_{model}$ dimensions becomes $h$ independent "
            r"softmaxes, each over $d_{model}/h$ dimensions.",
        ),
        ("q4", "#softmaxes ↑ (one per head), dim per softmax ↓ (d_model/h)."),
        # a bare d beside an operator is d_model
        ("q5", "d % h == 0, equal chunks."),
        ("q4", "h softmaxes of size d/h."),
        ("q1", "Shared Wq/Wk/Wv -> split. None per head."),
    ],
)
def test_latex_and_math_symbols_are_read_as_words(qid, text):
    assert _share(qid, text) >= 0.75


def test_a_bare_d_is_d_model_only_beside_an_operator():
    assert split_sentences("d % h == 0") == ["d_model mod h == 0"]
    assert split_sentences("option d) is right") == ["option d) is right"]


def test_i_e_and_e_g_end_no_sentence():
    assert split_sentences("d_model % h == 0, i.e. every head gets d_model/h, e.g. 4.") == [
        "d_model mod h == 0, that is every head gets d_model / h, for example 4."
    ]


# ------------------------------------------------------------------- notes and lists
@pytest.mark.parametrize(
    ("qid", "text"),
    [
        ("q3", "No. h0 → tok 2/3 (≈0.5 each), h1 → tok 4 (≈1)."),
        ("q3", "Nope. h0 -> 2,3; h1 -> 4."),
        (
            "q2",
            "- num_heads = 1: 256 parameters\n- num_heads = 2: 256 parameters\n- reason: every "
            "projection is d_model × d_model whatever the head count",
        ),
        (
            "q1",
            "* projections: one Wq, one Wk, one Wv for the whole layer, applied at full width\n"
            "* heads: each one reads its own d_head columns of Q, K and V\n"
            "* own matrices per head: none",
        ),
    ],
)
def test_notes_and_lists_are_read_as_their_sentences(qid, text):
    assert _share(qid, text) >= 0.75


@pytest.mark.parametrize(
    ("text", "at_least"),
    [
        ("Per-head W? No, shared. Each head = a slice of Q/K/V.", 1.0),
        ("Per-head W? No, shared.", 0.5),
    ],
)
def test_a_notes_question_answered_no_is_the_bare_answer(text, at_least):
    assert _share("q1", text) >= at_least


def test_a_nouns_abbreviation_keeps_the_full_stop_that_ends_its_sentence():
    assert split_sentences("per head: slice of cols. own W per head: no.") == [
        "per head, slice of columns.",
        "no own W per head",
    ]
    assert split_sentences("head 0 reads cols. 0-3 of Q.") == ["head 0 reads columns 0-3 of Q."]


def test_a_notes_label_answered_none_is_denied():
    assert split_sentences("own matrices per head: none") == ["no own matrices per head"]
    assert split_sentences("shared projection: yes") == ["shared projection"]


def test_a_count_per_line_is_compared_across_lines_only_where_the_rubric_says():
    same = "1 head: 256 parameters\n2 heads: 256 parameters"
    other = "1 head: 256 parameters\n2 heads: 512 parameters"
    assert _share("q2", same) == 0.5
    assert grade_answer("q2", other).score == 0


def test_a_one_word_answer_counts_only_as_a_sentence_of_its_own():
    assert _share("q1", "Shared.") > 0
    # "shared" inside another claim is not the shared projection
    assert _share("q1", "The tokens are shared out.") == 0


# ------------------------------------------------------------------- the question copied
@pytest.mark.parametrize("qid", WRITTEN_QUESTIONS)
def test_the_question_pasted_without_its_question_mark_earns_nothing(qid):
    prompt = load_rubrics()[qid].prompt
    pasted = re.sub(r"[?`]", "", prompt).lower()
    result = grade_answer(qid, pasted)
    assert result.score == 0, result.output
    assert NEEDS_REVIEW not in result.tags, result.output


def test_a_claim_in_the_questions_words_is_still_a_claim():
    # "Does each head have its own projection matrices?" asked; this asserts it (wrongly)
    result = grade_answer(
        "q1", "Q, K and V are split per head. Each head has its own projection matrices."
    )
    assert "Re-check" in result.output
    assert grade_answer("q1", "No, each head does not have its own projection matrices.").score > 0


def test_every_rubric_holds_the_question_students_read():
    template = (EXERCISES / "answers.md").read_text(encoding="utf-8")
    for qid, rubric in load_rubrics().items():
        heading = "Challenge" if qid == "challenge" else qid.upper()
        section = template.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
        quote = " ".join(line[1:].strip() for line in section.splitlines() if line.startswith(">"))
        assert rubric.prompt == quote, qid


# ------------------------------------------------------------------- more languages
@pytest.mark.parametrize(
    "text",
    [
        "Alla huvuden använder samma Wq, och inget huvud har egna matriser.",
        "d_model musi być podzielne przez num_heads, bo każda głowa dostaje równą część.",
        "d_model trebuie să fie divizibil cu num_heads, pentru că fiecare cap primește o parte.",
        "d_model, num_heads ile tam bölünebilmeli, çünkü her kafa eşit parça alır.",
        "d_model harus habis dibagi num_heads, karena setiap kepala mendapat bagian yang sama.",
        "Số lượng softmax độc lập tăng lên, mỗi đầu làm việc trên một không gian con nhỏ hơn.",
    ],
)
def test_answers_in_more_languages_go_to_a_teacher(text):
    assert other_language(text)


def test_a_few_loan_words_with_accents_are_still_english():
    assert not other_language(
        "The naïve café approach: d_model must be divisible by num_heads, as in Schrödinger."
    )


# ------------------------------------------------------------------- rubric options
def _rubric(tmp_path, phrasing: str):
    path = tmp_path / "q9.toml"
    path.write_text(
        'question = "q9"\n[[concept]]\nid = "a"\npoints = 1\nidea = "i"\nhint = "h"\n'
        f"phrasings = [{phrasing}]\n"
    )
    return load_rubric(path)


def test_a_phrasing_table_with_an_unknown_key_is_reported(tmp_path):
    with pytest.raises(RubricError, match="unless, across, alone"):
        _rubric(tmp_path, '{ text = "same count", untill = ["x"] }')


def test_phrasing_options_are_compiled(tmp_path):
    rubric = _rubric(
        tmp_path, '{ text = "same", unless = ["shapes"], across = true, alone = true }'
    )
    phrasing = rubric.concepts[0].phrasings[0]
    assert phrasing.unless == {"shape"} and phrasing.across and phrasing.alone


def test_a_power_written_as_code_and_one_count_for_both_head_counts_read_as_the_finding():
    text = "4 * d_model**2 = 4 * 64 = 256 for h = 1 and h = 2; no term depends on h."
    assert _share("q2", text) == 1
    assert _share("q2", "It is 256 for h = 1 and 512 for h = 2.") == 0


def test_a_matrix_noted_as_one_for_all_heads_is_the_shared_projection():
    text = (
        "Q = X @ Wq   # Wq: d_model x d_model, one for all heads\n"
        "Qh = Q.reshape(n, h, d_head).transpose(1, 0, 2)"
    )
    assert _share("q1", text) == 1
    assert grade_answer("q1", "Q = X @ Wq, one Wq for each head.").score <= POINTS["q1"] / 2


@pytest.mark.parametrize(
    "text",
    [
        r"No: for query 0, $\alpha^{(0)} = (0, 0, 0.424, 0.576, 0)$ and "
        r"$\alpha^{(1)} = (0, 0, 0, 0, 1)$, so the patterns differ.",
        "No, they differ: head 0 gives [0, 0, .424, .576, 0], head 1 gives [0, 0, 0, 0, 1].",
    ],
)
def test_the_worked_examples_weights_as_printed_are_the_evidence(text):
    assert _share("q3", text) == 1
