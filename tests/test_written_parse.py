"""The answers.md parser (mha_check/answers.py): headings, quotes, placeholder, encodings."""

from __future__ import annotations

import pytest

from mha_check.answers import (
    ANSWER_IDS,
    CODE,
    Answer,
    label_id,
    parse_answers,
    read_answers,
    read_sections,
)
from mha_grader.paths import EXERCISES, SOLUTIONS


def test_template_reads_as_six_unattempted_answers():
    assert read_answers(EXERCISES / "answers.md") == dict.fromkeys(ANSWER_IDS, "")


def test_reference_answers_are_found_without_their_quoted_questions():
    answers = read_answers(SOLUTIONS / "answers.md")
    assert list(answers) == list(ANSWER_IDS)
    for qid, text in answers.items():
        assert text, qid
        assert ">" not in text and "Write your answer" not in text
    assert answers["q5"].startswith("d_model must be divisible by num_heads")


def test_missing_file_gives_none_for_every_id(tmp_path):
    assert read_answers(tmp_path / "answers.md") == dict.fromkeys(ANSWER_IDS)


@pytest.mark.parametrize(
    ("heading", "qid"),
    [
        ("## Q1", "q1"),
        ("## q1:", "q1"),
        ("### Q1 … where Q/K/V come from", "q1"),
        ("## Question 1", "q1"),
        ("## Question #3", "q3"),
        ("# Q.4", "q4"),
        ("##Q5", "q5"),
        ("## 2.", "q2"),
        ("## Challenge", "challenge"),
        ("## Independent challenge", "challenge"),
        ("## **Q3**", "q3"),
    ],
)
def test_heading_variants_name_their_question(heading, qid):
    answers = parse_answers(f"{heading}\n\n> the question\n\nMy answer.\n")
    assert answers[qid] == "My answer."
    assert all(v is None for k, v in answers.items() if k != qid)


@pytest.mark.parametrize("text", ["Q10", "Quantity", "Question", "6.", "Notes on q", "Challenges"])
def test_text_that_names_no_question_is_no_label(text):
    assert label_id(text) is None


def test_missing_section_is_none_and_costs_only_that_question():
    text = "## Q1\nOne.\n## Q3\nThree.\n"
    answers = parse_answers(text)
    assert answers["q1"] == "One." and answers["q3"] == "Three."
    assert answers["q2"] is None and answers["challenge"] is None


def test_placeholder_left_beside_an_answer_is_dropped():
    answers = parse_answers("## Q2\n> q?\n\n_Write your answer here._\nSame count.\n")
    assert answers["q2"] == "Same count."


def test_placeholder_variants_count_as_not_attempted():
    for line in (
        "*Write your answer here.*",
        "write your answer here",
        "  _Write your answer here_",
    ):
        assert parse_answers(f"## Q4\n> q?\n\n{line}\n")["q4"] == ""


def test_quote_inside_the_answer_is_kept_as_text():
    answers = parse_answers("## Q1\n> The question\n\nAnswer.\n> a quoted remark\n")
    assert answers["q1"] == "Answer.\n\na quoted remark"


def test_crlf_bom_and_replacement_characters_are_tolerated():
    text = "\ufeff## Q1\r\n> q\r\nAnswer \ufffd here.\r\n## Q2\rTwo.\r"
    answers = parse_answers(text)
    assert answers["q1"] == "Answer \ufffd here."
    assert answers["q2"] == "Two."


def test_bytes_with_invalid_utf8_are_decoded_with_replacement():
    answers = parse_answers(b"## Q1\nbad \xff byte\n")
    assert answers["q1"] == "bad \ufffd byte"


def test_extra_prose_and_unrelated_headings_stay_out_of_answers():
    text = "# My answers\nIntro prose.\n## Q1\nOne.\n## Notes\nNot an answer.\n"
    assert parse_answers(text)["q1"] == "One."


def test_deeper_subheadings_stay_inside_the_answer():
    text = "## Q1\nOne.\n### Why\nBecause.\n## Q2\nTwo.\n"
    assert parse_answers(text)["q1"] == "One.\n\nWhy\n\nBecause."


def test_bold_label_lines_and_setext_headings_are_sections():
    text = "**Q1:** Inline one.\n\nQ2\n---\nTwo.\n"
    answers = parse_answers(text)
    assert answers["q1"] == "Inline one." and answers["q2"] == "Two."


def test_headings_inside_code_fences_are_not_sections_and_code_is_not_graded():
    text = "## Q1\nOne.\n```\n## Q2\n```\n"
    sections = read_sections(text)
    assert sections.answers["q2"].text is None
    assert sections.answers["q1"] == Answer("One.", (CODE,))


def test_duplicate_sections_are_joined():
    text = "## Q1\n_Write your answer here._\n## Q1\nSecond try.\n"
    assert parse_answers(text)["q1"] == "Second try."


def test_latex_backslashes_escapes_and_entities_read_as_displayed():
    text = "## Q5\n\n$d_{model} \\equiv 0 \\pmod{h}$, a \\* b &amp; c &lt;d&gt; `x % h`\n"
    assert parse_answers(text)["q5"] == "$d_{model} \\equiv 0 \\pmod{h}$, a * b & c <d> x % h"


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("See notes.\n<!-- the real answer is here -->", "an HTML comment or raw HTML"),
        ('See notes. <span style="display:none">the real answer</span>', "an HTML comment"),
        ("See notes.\n\n```\nthe real answer\n```", "a code block"),
        ("See notes.\n\n    the real answer", "a code block"),
        ("See notes. ![the real answer](a.png)", "an image"),
        ('See notes.\n\n[a]: http://x "the real answer"', "do not render"),
    ],
)
def test_text_a_reader_does_not_see_is_not_the_answer_and_is_named(answer, kind):
    sections = read_sections(f"## Q1\n\n> q\n\n{answer}\n")
    assert sections.answers["q1"].text == "See notes."
    assert any(kind in h for h in sections.answers["q1"].hidden)


def test_an_answer_written_right_under_the_quote_is_still_the_answer():
    # Markdown runs the line into the quote (a lazy continuation); the student meant it apart.
    assert parse_answers("## Q1\n> The question?\nMy answer.\n")["q1"] == "My answer."


def test_only_the_first_part_of_a_huge_file_or_paragraph_is_read_and_that_is_said():
    sections = read_sections("## Q1\n\n" + "word " * 50_000)
    assert sections.truncated
    assert len(sections.answers["q1"].text) <= 4_000
    assert any("too long" in h for h in sections.answers["q1"].hidden)
