"""Find the six written answers in a student's ``answers.md``, as a reader of the file sees them.

The one answer parser: ``mha-check`` (shipped to students) and the grader both use it, so a
student's word count is the count of what is graded. The file is parsed as Markdown
(markdown-it-py, CommonMark) and only text that renders counts: text in HTML comments, raw
HTML, fenced or indented code blocks, images and lines that do not render (a link reference
definition) is left out of the answer and reported in ``Answer.hidden``, so that the grader can
flag it for a teacher and ``mha-check`` can tell the student. Only the first ``MAX_CHARS``
characters are read (``Answers.truncated`` says when there was more).

Students edit the file by hand, so finding the sections is tolerant: heading variants (``## Q1``,
``## q1:``, ``### Q1 ...``, ``## Question 1``, ``##Q1``, ``## Challenge``, ``## Independent
challenge``, a bold ``**Q1**`` label line, a setext ``Q1`` / ``---`` heading), CRLF line ends, a
byte-order mark, and text decoded with ``errors="replace"``. Every step is linear in the size
of the file (no regular expression here can backtrack over a long line).

For each id the answer is ``None`` when the file has no section for it, ``""`` when the section
holds nothing but the quoted question and the placeholder line (not attempted), and otherwise the
visible text of the student's answer without the quoted question and the placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

ANSWER_IDS: tuple[str, ...] = ("q1", "q2", "q3", "q4", "q5", "challenge")
PLACEHOLDER = "_Write your answer here._"
# Characters of answers.md read: several times what six answers of a few sentences need (the
# template is 2,000), and what keeps parsing under a second on any input.
MAX_CHARS = 30_000

# What the kinds of text that do not render are called in messages.
HTML = "an HTML comment or raw HTML"
CODE = "a code block"
IMAGE = "an image"
UNRENDERED = "lines that do not render (such as a link reference definition)"
LONG = "a paragraph too long to be read in full"
# Characters of one paragraph read: CommonMark's inline rules (links, emphasis) can take time
# growing with the square of a paragraph's length, so a paragraph is read up to this length
# (about 600 words: no answer needs more) and parsing stays linear in the file's size.
MAX_PARAGRAPH = 4_000

# "Q1", "q 1", "Q.1", "Question 1", "Question #1", "Challenge", "Independent challenge", and a
# bare "1." / "1)" heading. The digit must not be followed by another digit ("Q10" is no id).
_LABEL = re.compile(
    r"""^\s*(?:
        (?:q|question)\s?[#.]?\s?(?P<num>[1-5])(?!\d)
      | (?:the\s)?(?:independent\s)?(?P<challenge>challenge)\b
      | (?P<bare>[1-5])\s?(?:[.):]|$)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_NO_SPACE_ATX = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?P<text>[^\s#].*)$")
_QUOTE = re.compile(r"^ {0,3}>")
_BOLD_LABEL = re.compile(r"^\s*(?:\*\*|__)(?P<label>[^*_]{1,40}?)(?:\*\*|__)(?P<rest>.*)$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TAG = re.compile(r"<[^<>]*>")
# Inline HTML that only formats text a reader sees (no attributes, so no style that hides it).
_HARMLESS = re.compile(r"</?(?:br|sub|sup|b|i|em|strong|code|u|s|small|kbd|mark)\s*/?>", re.I)
_OPENING = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?>")
# Invisible characters editors and copy-paste leave behind.
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"), None)
# html on: raw HTML is recognised as HTML, never read as text. Blocks are parsed first, then
# each paragraph's inline text on its own (see MAX_PARAGRAPH).
_MD = MarkdownIt("commonmark")
_MD.core.ruler.disable("inline")


@dataclass(frozen=True)
class Answer:
    text: str | None  # None: no section; "": not attempted; else the visible answer
    hidden: tuple[str, ...] = ()  # kinds of text in the section that do not render


@dataclass
class Answers:
    answers: dict[str, Answer] = field(default_factory=dict)  # every id of ANSWER_IDS, in order
    truncated: bool = False  # the file was longer than MAX_CHARS: the rest was not read


def label_id(text: str) -> str | None:
    """The answer id a heading's text names (``"Q3: heads"`` -> ``"q3"``), or None."""
    m = _LABEL.match(" ".join(text[:80].split()).strip("*_ "))
    if not m:
        return None
    if m.group("challenge"):
        return "challenge"
    return f"q{m.group('num') or m.group('bare')}"


def count_words(text: str) -> int:
    """The number of words in a (visible) answer, as mha-check reports it."""
    return len(text.split())


def _is_placeholder(line: str) -> bool:
    return " ".join(line.split()).strip("_* .").lower() == "write your answer here"


def _html_has_words(html: str) -> bool:
    """Whether raw HTML holds words a reader would not see as text (comments, or text inside
    HTML blocks): tags alone (``<br>``) are not."""
    inner = _TAG.sub(" ", html.replace("<!--", " ").replace("-->", " "))
    return _WORD.search(inner) is not None


def _hides(html: str) -> bool:
    """Whether a piece of raw HTML can hide text: anything but plain formatting tags."""
    return _HARMLESS.fullmatch(html.strip()) is None or _html_has_words(html)


def _opens(html: str) -> str | None:
    """The tag a piece of raw HTML opens and leaves open (text after it is inside), or None."""
    m = _OPENING.match(html.lstrip())
    if m is None or html.rstrip().endswith("/>"):
        return None
    tag = m[1].lower()
    return None if f"</{tag}" in html.lower() or tag in _VOID else tag


_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


@dataclass(frozen=True)
class _Heading:
    line: int  # where it starts
    body: int  # where its section's text starts
    level: int  # 1-6, or 7 for a bold label line (deeper than any heading)
    qid: str | None
    rest: str = ""  # text after a bold label, on the same line


def _headings(lines: list[str]) -> list[_Heading]:
    """Every heading that starts or ends a section, in line order. Lines inside code blocks and
    HTML blocks never are; a setext heading is one only when it names an answer (a ``---``
    under a line of text is as often meant as a rule); ``##Q1`` (no space, so no Markdown
    heading) and a bold label line are, when they name an answer."""
    tokens = _MD.parse("\n".join(lines))
    found = []
    for i, t in enumerate(tokens):
        if t.type == "heading_open" and t.level == 0 and t.map:
            qid = label_id(tokens[i + 1].content)
            if t.markup in ("=", "-") and qid is None:
                continue
            found.append(_Heading(t.map[0], t.map[1], int(t.tag[1]), qid))
        elif t.type == "paragraph_open" and t.map:
            for n in range(*t.map):
                atx = _NO_SPACE_ATX.match(lines[n])
                if atx and label_id(atx["text"]):
                    found.append(_Heading(n, n + 1, len(atx["hashes"]), label_id(atx["text"])))
                    continue
                bold = _BOLD_LABEL.match(lines[n])
                if bold and label_id(bold["label"]):
                    rest = bold["rest"].lstrip(" \t:.-")
                    found.append(_Heading(n, n + 1, 7, label_id(bold["label"]), rest))
    return sorted(found, key=lambda h: h.line)


def _inline(content: str) -> tuple[str, set[str]]:
    """The visible text of a paragraph's or heading's source, and what in it did not render."""
    hidden: set[str] = set()
    if len(content) > MAX_PARAGRAPH:
        content = content[:MAX_PARAGRAPH]
        hidden.add(LONG)
    children: list = []
    _MD.inline.parse(content, _MD, {}, children)
    out: list[str] = []
    inside: list[str] = []  # raw HTML tags left open: a style could hide what follows
    for c in children:
        if c.type in ("text", "text_special", "code_inline"):  # special: escapes, entities
            if not inside:
                out.append(c.content)
            elif c.content.strip():
                hidden.add(HTML)
        elif c.type in ("softbreak", "hardbreak"):
            out.append("\n")
        elif c.type == "html_inline":
            if re.fullmatch(r"<br\s*/?>", c.content.strip(), re.I):
                out.append("\n")
            elif _hides(c.content):
                hidden.add(HTML)
                tag = _opens(c.content)
                if tag:
                    inside.append(tag)
                elif inside and c.content.lower().startswith(f"</{inside[-1]}"):
                    inside.pop()
        elif c.type == "image":
            hidden.add(IMAGE)
    return "".join(out), hidden


def _without_question(body: list[str]) -> list[str]:
    """The section without the quoted question: the quote lines before any answer text (by
    source line, so that an answer written right under the quote, which Markdown would run
    into it, still counts)."""
    start = 0
    while start < len(body) and not body[start].strip():
        start += 1
    end = start
    while end < len(body) and _QUOTE.match(body[end]):
        end += 1
    return body[end:]


def _visible(body: list[str]) -> Answer:
    """A section's answer: the visible text of its blocks, without the quoted question and the
    placeholder line."""
    body = _without_question(body)
    tokens = _MD.parse("\n".join(body))
    blocks: list[str] = []
    hidden: set[str] = set()
    covered: set[int] = set()
    inside: str | None = None  # a raw HTML block left open: what follows is inside it
    for t in tokens:
        if t.map:
            covered.update(range(*t.map))
        if t.type == "html_block":
            if _hides(t.content):
                hidden.add(HTML)
            if inside is None:
                inside = _opens(t.content)
            elif f"</{inside}" in t.content.lower():
                inside = None
            continue
        if inside is not None:
            if t.type == "inline" and t.content.strip():
                hidden.add(HTML)
            continue
        if t.type == "inline":
            text, h = _inline(t.content)
            hidden |= h
            # Spaces collapse when Markdown is displayed: a run of them is one space.
            kept = [
                " ".join(line.split()) for line in text.split("\n") if not _is_placeholder(line)
            ]
            text = "\n".join(line for line in kept if line)
            if text:
                blocks.append(text)
        elif t.type in ("fence", "code_block") and _WORD.search(t.content):
            hidden.add(CODE)
    if any(line.strip() and n not in covered for n, line in enumerate(body)):
        hidden.add(UNRENDERED)
    order = (HTML, CODE, IMAGE, UNRENDERED, LONG)
    return Answer("\n\n".join(blocks), tuple(k for k in order if k in hidden))


def _lines(text: str | bytes) -> tuple[list[str], bool]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    truncated = len(text) > MAX_CHARS
    text = text[:MAX_CHARS].translate(_INVISIBLE).replace("\u00a0", " ")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), truncated


def read_sections(text: str | bytes) -> Answers:
    """Every answer of ``answers.md`` (its text), with what did not render in its section.

    A section runs to the next answer heading or to the next heading at the same or a higher
    level; deeper sub-headings stay part of the answer. When an id has two sections, their
    answers are joined.
    """
    lines, truncated = _lines(text)
    heads = _headings(lines)
    found: dict[str, Answer] = {}
    for k, head in enumerate(heads):
        if head.qid is None:
            continue
        end = len(lines)
        for nxt in heads[k + 1 :]:
            if nxt.qid is not None or nxt.level <= head.level:
                end = nxt.line
                break
        body = ([head.rest] if head.rest else []) + lines[head.body : end]
        answer = _visible(body)
        previous = found.get(head.qid)
        if previous is not None:
            joined = "\n\n".join(t for t in (previous.text, answer.text) if t)
            kinds = previous.hidden + tuple(h for h in answer.hidden if h not in previous.hidden)
            answer = Answer(joined, kinds)
        found[head.qid] = answer
    return Answers({q: found.get(q, Answer(None)) for q in ANSWER_IDS}, truncated)


def parse_answers(text: str | bytes) -> dict[str, str | None]:
    """The visible answer for each id in ``ANSWER_IDS``, in that order (see ``read_sections``)."""
    return {q: a.text for q, a in read_sections(text).answers.items()}


def read_answers(path: str | Path) -> dict[str, str | None]:
    """``parse_answers`` on a file; every id is None when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return dict.fromkeys(ANSWER_IDS)
    return parse_answers(path.read_bytes().decode("utf-8", errors="replace"))
