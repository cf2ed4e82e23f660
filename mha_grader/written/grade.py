"""Score one written answer against its rubric and write the feedback a student reads."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mha_check.answers import MAX_CHARS, Answer, read_sections
from mha_check.questions import WRITTEN_QUESTIONS

from ..outcomes import Tag, TestResult
from ..points import POINTS
from .flags import OTHER_LANGUAGE, flags_for
from .language import as_seen, other_language
from .match import Status
from .reading import Reading, read_concepts
from .rubric import Rubric, load_rubrics

NEEDS_REVIEW = Tag.NEEDS_REVIEW
# Answers longer than this many times the rubric's max_words are read only up to that point:
# they are flagged for a teacher anyway, and matching time stays bounded.
READ_LIMIT = 4
# An idea the answer gives only as what the course material says ("according to the notebook,
# ...") earns this share of its weight: the question asks what the student found.
CITED_SHARE = 0.5
# An idea given only as a guess by a student who says they do not know ("idk, probably
# different?", "No idea. Guess: the same?") earns this share of its weight: the student says the
# answer is not theirs to give. A guess alone ("I think", "maybe", "?") counts in full.
UNKNOWING_GUESS_SHARE = 0.5
_UNKNOWING = re.compile(
    r"\b(?:idk|dunno|i (?:really |honestly )?(?:do not|don'?t|dont) (?:really )?know"
    r"|(?:i have |i've |ive )?no (?:real )?(?:idea|clue)|not a clue|clueless)\b"
    # (not "no idea why": the student knows the finding, not its reason)
    r"(?! (?:why|how|what|whether|if))",
    re.IGNORECASE,
)
# the whole answer said to be a guess made without the work: a self-mark that calls it one
# ("(Self-mark: 1/4 - honestly I'm guessing, I never got parameter_counts to run.)") or a guess
# beside never having run the code: "idk" plus a right guess, every idea at most half
_GUESSED_ALL = re.compile(
    r"\(\s*self[- ]?(?:mark|grade|assessment|score)\b[^)]*\bguess"
    r"|\bguess(?:ing|ed)?\b[^.()]{0,40}\b(?:never|not|couldn'?t|could not|didn'?t|did not) "
    r"(?:(?:get|got|manage[ds]?|able)(?: [\w_]+){0,3} to )?(?:run|ran|work)",
    re.IGNORECASE,
)
LOOKALIKES = (
    "Some words mix in letters of another alphabet that look like Latin ones (a Cyrillic 'а' "
    "for an 'a'): they were read as they look; a teacher will read this answer."
)
_HEADINGS = {q: f"## {q.upper()}" for q in WRITTEN_QUESTIONS} | {"challenge": "## Challenge"}


def _name(qid: str) -> str:
    return f"{qid}: written answer"


def _result(qid: str, score: float, output: str, reason: str | None = None) -> TestResult:
    """The question's one result; ``reason``: why a person should read it (flagged)."""
    result = TestResult(_name(qid), qid, round(score, 2), POINTS[qid], output)
    if reason is not None:
        result.flag(reason)
    return result


def _feedback(rubric: Rubric, reading: Reading, unknowing: bool = False) -> list[str]:
    lines = []
    status = reading.status
    recognised = [c.idea for c in rubric.concepts if c.points and status[c.id] is Status.RECOGNISED]
    missing = [
        c
        for c in rubric.concepts
        if c.points and status[c.id] is Status.ABSENT and c.id not in reading.held
    ]
    wrong = [c.idea for c in rubric.concepts if status[c.id] in (Status.CONTRADICTED, Status.BOTH)]
    wrong += [m.idea for m in reading.misconceptions]
    if recognised:
        lines.append("Recognised: " + "; ".join(recognised) + ".")
    for idea in dict.fromkeys(wrong):
        lines.append(
            f"Re-check what you say about {idea}: part of your answer goes against what the "
            "module verified."
        )
    if missing:
        lines.append("Still missing, some hints:")
        lines.extend(f"- {c.hint}" for c in missing)
    if not recognised and not wrong:
        lines.insert(
            0, "None of the ideas this question asks about were recognised in your answer."
        )
    if recognised and not missing and not wrong and not reading.cited:
        lines.append("Every idea this question asks about is there.")
    for source, excerpt in dict.fromkeys(reading.copied):
        lines.append(
            f'"{excerpt}" is copied from {source}: copied text earns nothing. Say in your own '
            "words what you found and why."
        )
    cited = [c.idea for c in rubric.concepts if c.id in reading.cited]
    if cited:
        lines.append(
            "You give " + "; ".join(cited) + ' as what the course material says ("according '
            'to the notebook", "the notebook shows"): it counts half. Say what you found when '
            "you ran it yourself, in your own words."
        )
    guessed = [c.idea for c in rubric.concepts if c.id in reading.guessed]
    if guessed and unknowing:
        lines.append(
            "You give " + "; ".join(guessed) + " as a guess, and say you do not know: it counts "
            "half. Your own results let you state it as a finding."
        )
    elif guessed:
        lines.append(
            "You give " + "; ".join(guessed) + ' as a guess ("maybe", "I think", a question '
            "mark). It counts; your own results let you state it as a finding."
        )
    return lines


def _first_words(text: str, limit: int) -> str:
    for i, m in enumerate(re.finditer(r"\S+", text)):
        if i == limit:
            return text[: m.start()]
    return text


def grade_answer(qid: str, text: str | None, rubric: Rubric | None = None) -> TestResult:
    """One written answer: ``None`` = no section for it, ``""`` = not attempted."""
    if text is None:
        return _result(
            qid,
            0,
            f"No answer found for {qid}: answers.md has no section headed `{_HEADINGS[qid]}`. "
            "Keep the headings of the template so the grader can find your answers.",
        )
    if not text.strip():
        return _result(qid, 0, f"{qid}: not attempted yet (only the placeholder line is there).")
    text, lookalikes = as_seen(text)  # read as a person reads it
    if other_language(text):
        # the phrasings are English: a teacher reads it; half the points stand until then
        flag = OTHER_LANGUAGE
        return _result(qid, flag.cap * POINTS[qid], flag.message, reason=flag.message)
    rubric = rubric or load_rubrics()[qid]
    reading = read_concepts(rubric, _first_words(text, READ_LIMIT * rubric.max_words))
    status = reading.status
    weights = {c.id: c.points for c in rubric.concepts}
    unknowing = bool(_UNKNOWING.search(text))
    guessed_all = bool(_GUESSED_ALL.search(text))
    earned = sum(
        w
        * (CITED_SHARE if k in reading.cited else 1.0)
        * (UNKNOWING_GUESS_SHARE if unknowing and k in reading.guessed or guessed_all else 1.0)
        for k, w in weights.items()
        if status[k] is Status.RECOGNISED
    )
    earned -= sum(w for k, w in weights.items() if status[k] is Status.CONTRADICTED)
    earned -= sum(m.penalty for m in reading.misconceptions) * rubric.total_weight
    share = max(0.0, earned) / rubric.total_weight
    flags = flags_for(rubric, text, reading, earned)
    lines = _feedback(rubric, reading, unknowing)
    if guessed_all and earned > 0:
        lines.append(
            "You say the whole answer is a guess made without running your code: it counts "
            "half. Run it and state what you found."
        )
    if flags:
        share = min([share, *(f.cap for f in flags)])
        lines.extend(f.message for f in dict.fromkeys(flags))
    reasons = [f.message for f in flags if f.review]
    if lookalikes:
        lines.append(LOOKALIKES)
        reasons.append(LOOKALIKES)
    return _result(
        qid, share * POINTS[qid], "\n".join(lines), reason=reasons[-1] if reasons else None
    )


def warm() -> None:
    """Pay now what the first answer sheet of a process pays: the rubrics read and compiled, the
    hand-outs indexed (a grading process does it while its sandbox starts)."""
    from .copies import warm as index_handouts

    index_handouts(load_rubrics())


def grade_written(answers_text: str | None) -> list[TestResult]:
    """One result per written question, in contract order. ``answers_text`` is the content of
    answers.md (decoded with errors="replace"), or None when the submission has no answers.md."""
    if answers_text is None:
        return [
            _result(q, 0, "answers.md is missing from the submission: no written answer to grade.")
            for q in WRITTEN_QUESTIONS
        ]
    sections = read_sections(answers_text)
    results = []
    for q in WRITTEN_QUESTIONS:
        answer = sections.answers[q]
        result = grade_answer(q, answer.text)
        _flag_unread(result, answer, sections.truncated)
        results.append(result)
    return results


def _flag_unread(result: TestResult, answer: Answer, truncated: bool) -> None:
    """Text a reader of answers.md does not see, or that the grader did not read, earns
    nothing; a teacher is asked to look at it."""
    notes = []
    if answer.hidden:
        notes.append(
            f"Part of this section does not show when answers.md is displayed ("
            f"{', '.join(answer.hidden)}): only what a reader sees is graded, so that part "
            "earned nothing. Write your answer as plain text; a teacher will read this one."
        )
    if truncated:
        notes.append(
            f"answers.md is longer than the grader reads ({MAX_CHARS:,} characters); a teacher "
            "will read what follows."
        )
    if notes:
        result.output = "\n".join([result.output, *notes]).strip()
        result.flag(notes[-1])


def needs_review(results: Iterable[TestResult]) -> bool:
    """The grade sheet's ``needs_review`` column: any result a person should look at."""
    return any(r.needs_review for r in results)
