"""Find the parts of an answer copied from the hand-outs (sources.py), small edits allowed.

Both sides are read as the rubric reads them (the same rewriting, phrase folding and stems),
filler words dropped, so "the projections are d_model x d_model" and "projections d_model by
d_model" meet. An answer's word counts as copied when it lies in a run of ``SHINGLE`` words that
also occurs in a hand-out. A sentence most of whose words are copied is copied whole (a word
changed here and there leaves most of its runs intact); in a longer sentence of the student's
own, only a long copied stretch is. Short common phrases ("d_model must be divisible by
num_heads") are never long enough to count.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .rubric import Rubric
from .sources import Handout, load_handouts
from .text import FUNCTION_WORDS, Sentence

SHINGLE = 4  # words in a run compared with the hand-outs
COPIED_SHARE = 0.6  # of a sentence's words, from which the whole sentence is copied
MIN_SENTENCE = 6  # words: a shorter sentence is never called a copy
MIN_STRETCH = 12  # copied words in a row that are a copy inside a sentence of one's own
# copied words that are not notation, numbers or function words: "every projection is d_model x
# d_model whatever the head count" is notation the whole module shares, and "head 1 is all on
# token 4" the finding every student reports, not a copied explanation
MIN_PLAIN = 5
# a sentence copied this nearly whole (and at least MIN_SENTENCE words long) is a copy however
# plain its words: a hand-out's sentence pasted as the answer ("the projections are d_model x
# d_model whatever the head count: splitting into heads is a reshape")
WHOLE_SHARE = 0.9
WHOLE_MIN = MIN_SENTENCE


@dataclass(frozen=True)
class Copy:
    sentence: int
    positions: frozenset[int]  # the sentence's tokens that are copied
    source: str  # the hand-out's name, for feedback


def _content(sentence: Sentence) -> list[tuple[int, str]]:
    return [
        (i, t.stem)
        for i, t in enumerate(sentence.tokens)
        if t.word[:1].isalnum() and not t.is_filler
    ]


def _plain(sentence: Sentence, positions: list[int]) -> int:
    """How many of these tokens are ordinary words (not notation, phrase tokens, numbers or
    function words)."""
    tokens = sentence.tokens
    return sum(
        1
        for i in positions
        if not tokens[i].canonical
        and len(tokens[i].word) > 1
        and tokens[i].word.isalpha()
        and tokens[i].word not in FUNCTION_WORDS
    )


_INDEX: dict[tuple[int, str], dict[tuple[str, ...], int]] = {}


def _shingles(rubric: Rubric, handouts: tuple[Handout, ...]) -> dict[tuple[str, ...], int]:
    """Runs of SHINGLE stems in the hand-outs (their statements, not their questions) -> the
    index of a hand-out they occur in; built once per rubric."""
    key = (id(handouts), rubric.question)
    found = _INDEX.get(key)
    if found is None:
        found = {}
        for h, handout in enumerate(handouts):
            for sentence in rubric.normaliser.sentences(handout.text):
                if sentence.question:
                    continue
                stems = [s for _, s in _content(sentence)]
                for k in range(len(stems) - SHINGLE + 1):
                    found.setdefault(tuple(stems[k : k + SHINGLE]), h)
        _INDEX[key] = found
    return found


def warm(rubrics: dict[str, Rubric]) -> None:
    """Index the hand-outs for every rubric now, as the first answer sheet would."""
    handouts = load_handouts()
    for rubric in rubrics.values():
        _shingles(rubric, handouts)


def find_copies(
    rubric: Rubric, sentences: list[Sentence], handouts: tuple[Handout, ...] | None = None
) -> list[Copy]:
    """The copied parts of each sentence of an answer."""
    handouts = load_handouts() if handouts is None else handouts
    if not handouts:
        return []
    shingles = _shingles(rubric, handouts)
    copies = []
    for s_index, sentence in enumerate(sentences):
        content = _content(sentence)
        covered = [False] * len(content)
        sources: Counter[int] = Counter()
        for k in range(len(content) - SHINGLE + 1):
            h = shingles.get(tuple(stem for _, stem in content[k : k + SHINGLE]))
            if h is not None:
                covered[k : k + SHINGLE] = [True] * SHINGLE
                sources[h] += 1
        if not sources:
            continue
        copied = [i for (i, _), c in zip(content, covered, strict=True) if c]
        whole = len(content) >= WHOLE_MIN and len(copied) >= WHOLE_SHARE * len(content)
        if not whole and _plain(sentence, copied) < MIN_PLAIN:
            continue
        if len(content) >= MIN_SENTENCE and len(copied) >= COPIED_SHARE * len(content):
            positions = frozenset(range(len(sentence.tokens)))
        else:
            positions = frozenset(_stretches(content, covered))
        if positions:
            source = handouts[sources.most_common(1)[0][0]].name
            copies.append(Copy(s_index, positions, source))
    return copies + _beside_copies(rubric, sentences, handouts, copies)


def _beside_copies(
    rubric: Rubric, sentences: list[Sentence], handouts: tuple[Handout, ...], copies: list[Copy]
) -> list[Copy]:
    """Short sentences pasted: one next to a copy and found word for word in a hand-out's
    sentence ("... for 1, 2, 4 and 8 heads. Yours match torch's everywhere."), or one that is a
    hand-out's whole line (a heading). Too short to be called a copy by their runs of words."""
    copied = {c.sentence: c.source for c in copies}
    found = []
    for s_index, sentence in enumerate(sentences):
        if s_index in copied or sentence.question:
            continue  # (a question the student asks: "Same pattern? Not at all: ...")
        stems = [stem for _, stem in _content(sentence)]
        source = copied.get(s_index - 1) or copied.get(s_index + 1)
        if source is None or len(stems) < MIN_BESIDE or not _contained(rubric, handouts, stems):
            source = _whole_line(rubric, handouts, stems)
        if source is not None:
            found.append(Copy(s_index, frozenset(range(len(sentence.tokens))), source))
    return found


MIN_LINE = 4  # content words of a sentence that is a hand-out's whole line (a heading)
_LINES: dict[tuple[int, str], dict[tuple[str, ...], str]] = {}


def _whole_line(rubric: Rubric, handouts: tuple[Handout, ...], stems: list[str]) -> str | None:
    """The hand-out one of whose lines (a heading, a comment, a message) the sentence is, word
    for word ("More heads, the same number of parameters", the notebook's heading): a heading
    pasted as the answer is a copy however short."""
    if len(stems) < MIN_LINE:
        return None
    key = (id(handouts), rubric.question)
    if key not in _LINES:
        lines: dict[tuple[str, ...], str] = {}
        for handout in handouts:
            for line in handout.text.splitlines():
                for sentence in rubric.normaliser.sentences(line):
                    line_stems = tuple(stem for _, stem in _content(sentence))
                    if len(line_stems) >= MIN_LINE and not sentence.question:
                        lines.setdefault(line_stems, handout.name)
        _LINES[key] = lines
    return _LINES[key].get(tuple(stems))


MIN_BESIDE = 2  # content words of a short sentence beside a copy, to call it copied too
_SENTENCES: dict[tuple[int, str], tuple[str, ...]] = {}


def _contained(rubric: Rubric, handouts: tuple[Handout, ...], stems: list[str]) -> bool:
    """The stems occur in a row in one of the hand-outs' sentences."""
    key = (id(handouts), rubric.question)
    if key not in _SENTENCES:
        _SENTENCES[key] = tuple(
            f" {' '.join(stem for _, stem in _content(sentence))} "
            for handout in handouts
            for sentence in rubric.normaliser.sentences(handout.text)
            if not sentence.question
        )
    wanted = f" {' '.join(stems)} "
    return any(wanted in sentence for sentence in _SENTENCES[key])


def _stretches(content: list[tuple[int, str]], covered: list[bool]) -> set[int]:
    """Token positions of every run of at least MIN_STRETCH copied words (and what lies
    between them: punctuation, filler words)."""
    found: set[int] = set()
    run: list[int] = []
    for (i, _), copied in zip([*content, (-1, "")], [*covered, False], strict=True):
        if copied:
            run.append(i)
            continue
        if len(run) >= MIN_STRETCH:
            found.update(range(run[0], run[-1] + 1))
        run = []
    return found
