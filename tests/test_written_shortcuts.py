"""The reading's shortcuts change no reading: ``rewrite`` passes over a pattern only when its
every match needs text the answer lacks (text.py's ``_needs``), and a phrasing one of whose
words is in no sentence of the answer is not searched (match.py)."""

from __future__ import annotations

import re

import pytest

from mha_grader.written import match, text
from mha_grader.written.agreement import labelled_sets, load_labelled
from mha_grader.written.match import all_matches
from mha_grader.written.rubric import load_rubrics


def _answers() -> list[tuple[str, str]]:
    return [(e["question"], e["text"]) for path in labelled_sets() for e in load_labelled(path)]


def _rewrite_in_full(answer: str) -> str:
    """``rewrite`` without its shortcut: every pattern run."""
    answer = text._LONG_WORD.sub(text._cue_spelling, answer)
    answer = text._dialogue(answer)
    for pattern, replacement in text._REWRITES:
        answer = pattern.sub(replacement, answer)
    return text._own_width(
        text._wrong_head_width(text._PART_OF_WIDTH.sub(text._part_of_width, answer))
    )


def test_rewrite_with_its_shortcut_is_rewrite_in_full_on_every_labelled_answer():
    for _, answer in _answers():
        assert text.rewrite.__wrapped__(answer) == _rewrite_in_full(answer), answer


@pytest.mark.parametrize(
    ("pattern", "matching"),
    [
        (r"\bw\s*\^\s*\{?([qkvo])\}?", "W^Q"),
        (r"\\(?:mathrm|text)\s*", r"\mathrm{d}"),
        (r"\bmtx\b|\bmatx\b", "one MTX"),
        (r"(?<=[a-z] )\(([a-z]+)\)(?= [a-z])", "no (separate) matrices"),
        (r"(\d)\s*[x×*]\s*(\d)", "8×8"),
        (
            r"(?m)^[ \t]*(?:edit(?:ed)?|update|correction)(?:[ \t]*\d+)?[ \t]*[:–—-][ \t]*",
            "EDIT 2: scratch that",
        ),
        (r"(?m)^[ \t]*\|(.*)\|[ \t]*$", "| Wo | one per head |"),
        (r"~~(?:(?!~~)[^\n])+~~", "~~each head has its own Wq~~"),
        (r"(?m)^[ \t]*(?:[-*+][ \t]+)?\[ \][^\n]*", "- [ ] one softmax per head"),
        (r"(?m)^([ \t]*(?:[-*+][ \t]+)?)\[x\][ \t]*", "* [X] shared projections"),
        (
            r"(?m)^[ \t]*(?:[-*+•][ \t]+)?(?:not (?:so |too |entirely |quite |really )?sure|unsure|"
            r"uncertain|doubtful|not certain|no idea|unclear|open questions?)(?: about)?[ \t]*:"
            r"(?:[^\n]*[^\s:][^\n]*|[ \t]*(?:\n[ \t]*[-*+•][^\n]*)+)",
            "Unsure about:\n- why the split is equal",
        ),
        (
            r"(?m)^[ \t]*(?:breaking(?: news)?|exclusive|explainer|confirmed|developing|opinion|"
            r"analysis|just in|fact check)[ \t]*[:–—-][ \t]*",
            "JUST IN - the heads share Wq",
        ),
        (
            r"(?m)^[ \t]*(?:rumou?r|unverified|unconfirmed|hearsay|gossip)[ \t]*[:–—-][ \t]*",
            "Unconfirmed: 256 for both",
        ),
        (r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$", "|---|---|"),
        (r"(?:\\?sqrt|√)[ \t]*[({]?[ \t]*d_?\{?model\}?[ \t]*[)}]?(?![ \t]*/)", "sqrt(d_model)"),
        (text._RECORD, '{"own_matrices_per_head": false, "confidence": "high"}'),
        (text._ROLE, "I am head 0. Looking at token 0, I give 0.424 to token 2"),
        (
            r"\b(\d{2,})((?:\s+[a-z_]+){0,2}?)\s+(?:either way|whichever way)\b",
            "I hold 256 parameters either way",
        ),
        (
            r",?[ \t]+whether[ \t]+(?:with[ \t]+)?(?:one|1|a single)[ \t]+heads?[ \t]+or[ \t]+"
            r"(?:with[ \t]+)?(?:two|2|more|several|many)(?:[ \t]+heads)?\b",
            "256, whether with one head or with two",
        ),
        (
            r"(?m)^[ \t]*eli5[ \t]*:[^\n]*?(?=for grown-?ups[ \t]*:|\n|$)",
            "ELI5: one big cookie cutter. For grown-ups: one Wq",
        ),
        (r"\bfor grown-?ups[ \t]*:[ \t]*", "For grown-ups: one Wq"),
        (
            r"(?<![\w/])([a-z]{3,})[ \t]+/[ \t]+([a-z]{2,})\b(?![_/])",
            "It must be divisible / by num_heads",
        ),
        (text._CHOICE, "(a) the same pattern;\n(b) different.\n-> (b)"),
        (text._SOAP, "S: gut says no.\nO: not run.\nA: deferred.\nP: run it."),
        (
            r"(?m)^[ \t]*(?-i:NOTED|ACTIONS?|ACTION ITEMS?)\b[^\n:]{0,40}:[^\n]*",
            "AGREED: one Wq.\nNOTED (no consensus): Jo holds that ...",
        ),
        (
            r"(?m)^[ \t]*(?-i:AGREED)[ \t]*\((?:not by me|without me|over my objection)\)[^\n]*",
            "AGREED (not by me): two heads cost double",
        ),
        (
            r"[ \t]*\((?:disputed|contested|debated|controversial)\)(?=[ \t]*[.;]?[ \t]*(?:\n|$))",
            "hence 'the heads differ' (disputed).",
        ),
        (r"[ \t]+comma\b[ \t]*(?=[\s\S]*\bfull stop\b)", "the same tokens comma only full stop"),
        (r"[ \t]+full stop\b[ \t]*", "yes full stop"),
        (r"\bsoft[ \t]+max(es|s)?\b", "more soft maxes"),
        (r"\bsub[ \t]+spaces?\b", "smaller sub spaces"),
        (
            r"\b(is|are|was|were|be)[ \t]+but[ \t]+(?=(?:a |an |the )?\w+[ \t]*(?:[.;!]|$))",
            "what difference there be is but noise.",
        ),
    ],
)
def test_what_a_pattern_needs_is_in_every_text_it_matches(pattern, matching):
    compiled = re.compile(pattern, re.IGNORECASE)
    assert compiled.search(matching)
    needs = text._needs(re._parser.parse(compiled.pattern, compiled.flags))
    assert needs, "a need is found"
    assert text._may_match(needs, matching.lower())


def test_a_letter_that_matches_another_under_ignorecase_is_no_need():
    # the Kelvin sign matches "k" under IGNORECASE: no lower-case test of ASCII text may rely
    # on it (nor on the dotless i, nor on the long s)
    for char in ("\u212a", "\u0131", "\u017f"):
        assert text._lower(char) is None


def _all_readings(answers: list[tuple[str, str]]) -> list:
    rubrics = load_rubrics()
    found = []
    for qid, answer in answers:
        rubric = rubrics[qid]
        sentences = rubric.normaliser.sentences(answer)
        memos = [{"vocabulary": rubric.vocabulary} for _ in range(len(sentences) + 1)]
        found.append([all_matches(c, sentences, memos) for c in rubric.concepts])
    return found


def test_a_phrasing_is_found_with_or_without_the_answer_wide_check(monkeypatch):
    answers = _answers()[::7]
    checked = _all_readings(answers)
    monkeypatch.setattr(match._AnswerSlots, "__missing__", lambda self, slot: True)
    assert _all_readings(answers) == checked
