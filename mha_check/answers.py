"""Find the six written answers in a student's ``answers.md``.

Standard library only: this module ships to students inside ``mha-check`` and is also used by the
grader. Students edit the file by hand, so the parser is tolerant: heading variants (``## Q1``,
``## q1:``, ``### Q1 ...``, ``## Question 1``, ``## Challenge``, ``## Independent challenge``,
a bold ``**Q1**`` label line, a setext ``Q1`` / ``---`` heading), CRLF line ends, a byte-order
mark, and text decoded with ``errors="replace"``.

For each id the result is ``None`` when the file has no section for it, ``""`` when the section
holds nothing but the quoted question and the placeholder line (not attempted), and otherwise the
student's answer with the quoted question and the placeholder removed.
"""

from __future__ import annotations

import re
from pathlib import Path

ANSWER_IDS: tuple[str, ...] = ("q1", "q2", "q3", "q4", "q5", "challenge")
PLACEHOLDER = "_Write your answer here._"

# "Q1", "q 1", "Q.1", "Question 1", "Question #1", "Challenge", "Independent challenge", and a
# bare "1." / "1)" heading. The digit must not be followed by another digit ("Q10" is no id).
_LABEL = re.compile(
    r"""^\s*(?:
        (?:q|question)\s*[#.]?\s*(?P<num>[1-5])(?!\d)
      | (?:the\s+)?(?:independent\s+)?(?P<challenge>challenge)\b
      | (?P<bare>[1-5])\s*(?:[.):]|$)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_ATX = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?P<space>[ \t]*)(?P<text>.*?)[ \t#]*$")
_BOLD_LABEL = re.compile(
    r"^\s*(?:\*\*|__)(?P<label>[^*_]{1,40}?)(?:\*\*|__)\s*[:.\-]?\s*(?P<rest>.*)$"
)
_SETEXT_RULE = re.compile(r"^ {0,3}(?:=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_QUOTE = re.compile(r"^ {0,3}>")
_PLACEHOLDER = re.compile(r"^\s*[_*]*\s*write\s+your\s+answer\s+here\s*\.?\s*[_*]*\s*$", re.I)
# Invisible characters editors and copy-paste leave behind.
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"), None)


def label_id(text: str) -> str | None:
    """The answer id a heading's text names (``"Q3: heads"`` -> ``"q3"``), or None."""
    m = _LABEL.match(text.strip().strip("*_").strip())
    if not m:
        return None
    if m.group("challenge"):
        return "challenge"
    return f"q{m.group('num') or m.group('bare')}"


def _normalise(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.translate(_INVISIBLE).replace("\u00a0", " ")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _headings(lines: list[str]) -> list[tuple[int, int, str | None, str]]:
    """Every heading as (line index, level, answer id or None, text after a bold label).

    Bold label lines count as level 7 (deeper than any markdown heading); setext headings count
    only when they name an answer id, since ``---`` is also a horizontal rule.
    """
    found = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        atx = _ATX.match(line)
        # "##Q1" (no space) is no markdown heading, but students write it for an answer heading.
        if atx and (atx.group("space") or not atx.group("text") or label_id(atx.group("text"))):
            found.append((i, len(atx.group("hashes")), label_id(atx.group("text")), ""))
            continue
        bold = _BOLD_LABEL.match(line)
        if bold and label_id(bold.group("label")):
            found.append((i, 7, label_id(bold.group("label")), bold.group("rest")))
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and _SETEXT_RULE.match(nxt) and label_id(line):
            found.append((i, 1 if nxt.strip()[0] == "=" else 2, label_id(line), ""))
    return found


def _clean(body: list[str]) -> str:
    """Drop the quoted question (the quote block before any answer text) and the placeholder."""
    kept: list[str] = []
    seen_text = in_fence = False
    for line in body:
        if _FENCE.match(line):
            in_fence = not in_fence
        elif in_fence:
            pass  # code stays as written
        elif _PLACEHOLDER.match(line):
            continue
        elif _QUOTE.match(line):
            if not seen_text:
                continue  # the question, as the template quotes it
            line = _QUOTE.sub("", line, count=1).removeprefix(" ")  # a quote inside the answer
        elif _SETEXT_RULE.match(line) and (not kept or kept[-1].strip() == ""):
            continue  # a horizontal rule between sections
        else:
            line = _strip_subheading(line)
        if line.strip():
            seen_text = True
        kept.append(line.rstrip())
    return "\n".join(kept).strip()


def parse_answers(text: str | bytes) -> dict[str, str | None]:
    """The student's answer for each id in ``ANSWER_IDS``, in that order.

    ``None``: no section for that id; ``""``: not attempted (only the question and placeholder);
    otherwise the answer text. A section runs to the next answer heading or to the next heading
    at the same or a higher level; deeper sub-headings stay part of the answer. When an id has
    two sections, their answers are joined.
    """
    lines = _normalise(text)
    heads = _headings(lines)
    answers: dict[str, str | None] = dict.fromkeys(ANSWER_IDS)
    for k, (start, level, qid, rest) in enumerate(heads):
        if qid is None:
            continue
        end = len(lines)
        for nxt_start, nxt_level, nxt_qid, _ in heads[k + 1 :]:
            if nxt_qid is not None or nxt_level <= level:
                end = nxt_start
                break
        skip = 2 if start + 1 < len(lines) and _SETEXT_RULE.match(lines[start + 1]) else 1
        body = ([rest] if rest else []) + lines[start + skip : end]
        answer = _clean(body)
        previous = answers[qid]
        answers[qid] = (
            answer if not previous else (f"{previous}\n\n{answer}" if answer else previous)
        )
    return answers


def _strip_subheading(line: str) -> str:
    atx = _ATX.match(line)
    return atx.group("text") if atx and atx.group("space") else line


def read_answers(path: str | Path) -> dict[str, str | None]:
    """``parse_answers`` on a file; every id is None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return dict.fromkeys(ANSWER_IDS)
    return parse_answers(path.read_bytes().decode("utf-8", errors="replace"))
