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

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TypeVar

import numpy as np

from . import handout_index
from .rubric import Rubric
from .sources import Handout, load_handouts
from .text import FUNCTION_WORDS, Sentence, rewrite

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


_MEASURED = re.compile(r"\d*\.\d+")  # a decimal value: a weight, a share, a measurement


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


T = TypeVar("T")


def _per_rubric(
    build: Callable[[Rubric, tuple[Handout, ...]], T],
) -> Callable[[Rubric, tuple[Handout, ...]], T]:
    """``build(rubric, handouts)``, an index of the hand-outs as a rubric reads them, made once
    per rubric and hand-outs. The hand-outs are kept beside it: their id, the key, is never
    another tuple's while the entry stands."""
    made: dict[tuple[int, str], tuple[tuple[Handout, ...], T]] = {}

    @wraps(build)
    def cached(rubric: Rubric, handouts: tuple[Handout, ...]) -> T:
        key = (id(handouts), rubric.question)
        entry = made.get(key)
        if entry is None or entry[0] is not handouts:
            entry = made[key] = (handouts, build(rubric, handouts))
        return entry[1]

    return cached


@_per_rubric
def _handout_sentences(
    rubric: Rubric, handouts: tuple[Handout, ...]
) -> tuple[tuple[int, Sentence], ...]:
    """Every hand-out sentence as ``rubric`` reads it, with its hand-out's index: once per
    rubric, for every index below, from handouts_index.json where it holds them."""
    stored = handout_index.stored_sentences(rubric, handouts)
    return read_sentences(rubric, handouts) if stored is None else stored


def read_sentences(
    rubric: Rubric, handouts: tuple[Handout, ...]
) -> tuple[tuple[int, Sentence], ...]:
    """The reading itself (55 kB through the rubric's normaliser: most of the indexes' cost)."""
    return tuple(
        (h, sentence)
        for h, handout in enumerate(handouts)
        for sentence in rubric.normaliser.sentences(handout.text)
    )


@_per_rubric
def _shingles(rubric: Rubric, handouts: tuple[Handout, ...]) -> dict[tuple[str, ...], int]:
    """Runs of SHINGLE stems in the hand-outs (their statements, not their questions) -> the
    index of a hand-out they occur in."""
    found: dict[tuple[str, ...], int] = {}
    for h, sentence in _handout_sentences(rubric, handouts):
        if sentence.question:
            continue
        stems = [s for _, s in _content(sentence)]
        for k in range(len(stems) - SHINGLE + 1):
            found.setdefault(tuple(stems[k : k + SHINGLE]), h)
    return found


def warm(rubrics: dict[str, Rubric]) -> None:
    """Index the hand-outs for every rubric now, as the first answer sheet would."""
    handouts = load_handouts()
    for rubric in rubrics.values():
        _shingles(rubric, handouts)
        _bag_index(rubric, handouts)  # and the sentences' bags and their parts'
        _part_bag_index(rubric, handouts)
        _sentence_texts(rubric, handouts)
        _lines(rubric, handouts)


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
        # per hand-out: a stretch is copied from one of them, not stitched from runs of several
        # ("head 0 split token 0's attention between tokens 2 and 3, and head 1 put all of it on
        # token 4" meets the README in one half and the notebook in the other: the finding as
        # every student reports it, in the words any report of it uses)
        by_source: dict[int, list[bool]] = {}
        sources: Counter[int] = Counter()
        for k in range(len(content) - SHINGLE + 1):
            h = shingles.get(tuple(stem for _, stem in content[k : k + SHINGLE]))
            if h is not None:
                covered[k : k + SHINGLE] = [True] * SHINGLE
                by_source.setdefault(h, [False] * len(content))[k : k + SHINGLE] = [True] * SHINGLE
                sources[h] += 1
        if not sources:
            continue
        copied = [i for (i, _), c in zip(content, covered, strict=True) if c]
        whole = len(content) >= WHOLE_MIN and len(copied) >= WHOLE_SHARE * len(content)
        if not whole and _plain(sentence, copied) < MIN_PLAIN:
            continue
        most = max(sum(one) for one in by_source.values())  # from one hand-out
        # values the student measured, which the copied runs do not hold ("head 0 split its
        # attention 0.424/0.576 between tokens 2 and 3"): a report of their own run, in the words
        # any report of it uses, copied only where a long stretch is
        measured = any(
            _MEASURED.fullmatch(stem) and not copied_here
            for (_, stem), copied_here in zip(content, covered, strict=True)
        )
        if len(content) >= MIN_SENTENCE and most >= COPIED_SHARE * len(content) and not measured:
            positions = frozenset(range(len(sentence.tokens)))
        else:
            positions = frozenset().union(*(_stretches(content, one) for one in by_source.values()))
        if positions:
            source = handouts[sources.most_common(1)[0][0]].name
            copies.append(Copy(s_index, positions, source))
    copies += _loose_copies(rubric, sentences, handouts, {c.sentence for c in copies})
    return copies + _beside_copies(rubric, sentences, handouts, copies)


# A copy in looser form: the hand-out's words in another order ("Q, K and V are projected once at
# full d_model by multi-head attention, and then the feature axis is cut ..." from "Multi-head
# attention projects Q, K and V once at full d_model and then cuts the feature axis ..."), or a
# sentence remixed from the parts of several hand-out sentences. Runs of words miss both; the
# bag of a sentence's (or a part's) words does not. Only a sentence that brings most of one
# hand-out sentence's words, and many plain ones, is a copy: the module's vocabulary alone is not.
LOOSE_MIN = 8  # content words of a sentence compared as a bag
LOOSE_SHARE = 0.8  # of the sentence's words found in one hand-out sentence
LOOSE_SOURCE_SHARE = 0.75  # of that hand-out sentence's words found in the answer's
LOOSE_PLAIN = 6  # plain words among them (not notation, numbers, function words)
# a remix: parts (clauses between , ; : and "so", "and then") each from some hand-out sentence
PART_MIN = 4  # content words of a part compared
PART_SHARE = 0.85  # of a part's words found in one hand-out sentence
PART_SOURCE_SHARE = 0.5  # of that hand-out sentence's (or clause's) words the part brings
PART_SWAP_MIN = 5  # content words of a part from which one of them may be another word
REMIX_SHARE = 0.8  # of the sentence's content words lying in such parts
# a passive or reordered copy changes a word's form, which the rubric's phrase folding can turn
# into another token ("projects" -> project, "projected" -> projected; "cut into" -> split,
# "cuts the" -> cut): compared as one word here
_BAG_FOLD = {"projected": "project", "cut": "split", "after": "then", "befor": "then"}
# a condition's connective: "raises a ValueError when X" is the docstring's "ValueError if X"
_BAG_FOLD |= {"when": "if", "whenev": "if"}
# the passive's participles and its agent: "the slice of features seen by each head" is "the
# slice of features each head sees"
_BAG_FOLD |= {"seen": "see", "given": "give", "taken": "take", "shown": "show", "done": "do"}
# A copy with its words swapped for synonyms, one by one, as a thesaurus (or a rewording tool)
# swaps them: "maps Q, K and V a single time at full d_model and afterwards slices the feature
# dimension into num_heads identical pieces" is the docstring's "projects ... once ... and then
# cuts the feature axis into num_heads equal chunks". Compared as one word here, in the bags only
# (a run of words is the hand-out's words as written).
_SWAPS = {
    "split": "split divid divides slice cut chop partit piec chunk portion part segment section",
    "then": "then afterward later subsequ next",
    "same": "same ident equal",
    "project": "project map transform",
    "see": "see observ view watch",
    "put": "put place assign send",
    "attent": "attent focus",
    "between": "between among across",
    "all": "all whole entir",
    "axi": "axi dimens",
    "each": "each per everi",
    "get": "get receiv obtain",
    "enough": "enough suffic",
    "extra": "extra addit more",
    "size": "size width length",
    "say": "say report state tell",
    # "fails to divide" for "does not divide"
    "not": "not fail",
}
_BAG_FOLD |= {word: key for key, words in _SWAPS.items() for word in words.split()}
# "a single time", "one time": once
_ONCE = ({"singl", "one"}, "time")
_PASSIVE_AGENT = frozenset({"by"})
_PRONOUNS = frozenset("it they them its their he she we you i".split()) | _PASSIVE_AGENT
_PART_BREAKS = frozenset(", ; : ( ) — – so then while whereas".split())


@_per_rubric
def _bags(rubric: Rubric, handouts: tuple[Handout, ...]) -> tuple[tuple[frozenset[str], int], ...]:
    """Every hand-out sentence's bag of stems (a question too: "does every pair of heads still
    differ?" turned into a statement is copied), with its hand-out's index."""
    found = []
    for h, sentence in _handout_sentences(rubric, handouts):
        bag = frozenset(stem for _, stem in _bag_content(sentence))
        if len(bag) >= PART_MIN:
            found.append((bag, h))
    return tuple(found)


@_per_rubric
def _part_bags(
    rubric: Rubric, handouts: tuple[Handout, ...]
) -> tuple[tuple[frozenset[str], int], ...]:
    """The hand-out sentences' bags and their clauses' (split as an answer's parts are): a remix
    may take one clause of a hand-out sentence ("head 0 splits its attention between tokens 2
    and 3") into a part of its own, and bring only that clause's words."""
    found = list(_bags(rubric, handouts))
    for h, sentence in _handout_sentences(rubric, handouts):
        for part in _parts(sentence, _bag_content(sentence)):
            bag = frozenset(stem for _, stem in part)
            if len(bag) >= PART_MIN:
                found.append((bag, h))
    return tuple(found)


def _parts(sentence: Sentence, content: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """A sentence's content words in parts: clauses between , ; : and "so", "and then"."""
    parts: list[list[tuple[int, str]]] = [[]]
    stems = dict(content)
    for i, token in enumerate(sentence.tokens):
        if (
            token.word in _PART_BREAKS
            or token.word == "and"
            and i + 1 < len(sentence.tokens)
            and (sentence.tokens[i + 1].word in ("then", "so"))
        ):
            parts.append([])
        elif i in stems and not (token.word == "and" and not parts[-1]):
            parts[-1].append((i, stems[i]))  # (an "and" that opens a part joins it, no more)
    return parts


def _bag_content(sentence: Sentence) -> list[tuple[int, str]]:
    content = [
        (i, _BAG_FOLD.get(stem, stem))
        for i, stem in _content(sentence)
        if sentence.tokens[i].word not in _PRONOUNS
    ]
    for k in range(len(content) - 1):
        if content[k][1] in _ONCE[0] and content[k + 1][1] == _ONCE[1]:
            content[k] = (content[k][0], "onc")
            content[k + 1] = (content[k + 1][0], "onc")
    return content


_Bags = tuple[tuple[frozenset[str], int], ...]


class _BagIndex:
    """Bags (of stems, with their hand-out's index) indexed by stem: an answer's sentence shares
    a stem with a few hundred of the hand-outs' bags, not all of them, and what each bag shares
    with it is counted in one NumPy call rather than stem by stem in Python."""

    def __init__(self, bags: _Bags):
        self.bags = bags
        holding: dict[str, list[int]] = {}
        for i, (bag, _) in enumerate(bags):
            for stem in bag:
                holding.setdefault(stem, []).append(i)
        self._holding = {stem: np.array(at, dtype=np.intp) for stem, at in holding.items()}
        self._sizes = np.array([len(bag) for bag, _ in bags], dtype=np.intp)
        # (each root computed by Python, as the scores were before: the same floats, the same
        # ties broken the same way)
        self._roots = np.array([len(bag) ** 0.5 for bag, _ in bags], dtype=np.float64)

    def _shared(self, words: frozenset[str]) -> np.ndarray | None:
        """How many of ``words`` each bag holds (None: no bag holds any)."""
        hits = [self._holding[stem] for stem in words if stem in self._holding]
        if not hits:
            return None
        return np.bincount(np.concatenate(hits), minlength=len(self.bags))

    def best(self, words: frozenset[str]) -> tuple[frozenset[str], int] | None:
        """The bag that shares most with ``words`` for its size (the first such, in order), with
        what they share."""
        shared = self._shared(words)
        if shared is None:
            return None
        bag, h = self.bags[int(np.argmax(shared / self._roots))]  # (argmax: the first best)
        return words & bag, h

    def source_share(self, shared: frozenset[str]) -> float:
        """The largest share of a bag's words that ``shared`` is, among the bags holding all of
        it (0 if none does): its size over the smallest such bag's."""
        counts = self._shared(shared)
        if counts is None:
            return 0.0
        holding = self._sizes[counts == len(shared)]
        return len(shared) / int(holding.min()) if len(holding) else 0.0


@_per_rubric
def _bag_index(rubric: Rubric, handouts: tuple[Handout, ...]) -> _BagIndex:
    return _BagIndex(_bags(rubric, handouts))


@_per_rubric
def _part_bag_index(rubric: Rubric, handouts: tuple[Handout, ...]) -> _BagIndex:
    return _BagIndex(_part_bags(rubric, handouts))


def _loose_copies(
    rubric: Rubric, sentences: list[Sentence], handouts: tuple[Handout, ...], done: set[int]
) -> list[Copy]:
    bags = _bag_index(rubric, handouts)
    found = []
    for s_index, sentence in enumerate(sentences):
        if s_index in done or sentence.question:
            continue
        content = _bag_content(sentence)
        words = frozenset(stem for _, stem in content)
        if len(words) < LOOSE_MIN:
            continue
        source = _loose_source(rubric, handouts, bags, sentence, content, words)
        if source is not None:
            found.append(
                Copy(s_index, frozenset(range(len(sentence.tokens))), handouts[source].name)
            )
    return found


def _plain_stems(sentence: Sentence, content: list[tuple[int, str]], stems: frozenset[str]) -> int:
    return len({stem for i, stem in content if stem in stems and _plain(sentence, [i])})


def _loose_source(
    rubric: Rubric,
    handouts: tuple[Handout, ...],
    bags: _BagIndex,
    sentence: Sentence,
    content: list[tuple[int, str]],
    words: frozenset[str],
) -> int | None:
    """The hand-out a sentence is copied from in looser form, or None."""
    best = bags.best(words)
    if best is not None:
        shared, h = best
        if (
            len(shared) >= LOOSE_SHARE * len(words)
            and bags.source_share(shared) >= LOOSE_SOURCE_SHARE
            and _plain_stems(sentence, content, shared) >= LOOSE_PLAIN
        ):
            return h
    # a remix: every part of it from some hand-out sentence, or a clause of one
    part_bags = _part_bag_index(rubric, handouts)
    copied: list[tuple[int, str]] = []
    sources: list[int] = []
    for part in _parts(sentence, content):
        stems = frozenset(stem for _, stem in part)
        if len(stems) < PART_MIN:
            # a short part found in a row in a hand-out ("same input, same projections")
            if len(part) >= 2 and _contained(rubric, handouts, [stem for _, stem in part]):
                copied += part
            continue
        best = part_bags.best(stems)
        if best is None:
            continue
        shared, h = best
        # one word of a longer part may be swapped for a synonym ("sent to token 4" for "puts
        # it on token 4")
        wanted = (
            min(PART_SHARE * len(stems), len(stems) - 1)
            if len(stems) >= PART_SWAP_MIN
            else (PART_SHARE * len(stems))
        )
        if len(shared) >= wanted and part_bags.source_share(shared) >= PART_SOURCE_SHARE:
            copied += part
            sources.append(h)
    plain = _plain_stems(sentence, content, frozenset(stem for _, stem in copied))
    if len(sources) >= 2 and len(copied) >= REMIX_SHARE * len(content) and plain >= LOOSE_PLAIN:
        return sources[0]
    return None


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
        beside = source is not None and len(stems) >= MIN_BESIDE
        if not (beside and _contained(rubric, handouts, stems, cut=True)):
            source = _whole_line(rubric, handouts, stems)
        if source is not None:
            found.append(Copy(s_index, frozenset(range(len(sentence.tokens))), source))
    return found


MIN_LINE = 4  # content words of a sentence that is a hand-out's whole line (a heading)
_LINE_BREAK = "\n\n"


def _whole_line(rubric: Rubric, handouts: tuple[Handout, ...], stems: list[str]) -> str | None:
    """The hand-out one of whose lines (a heading, a comment, a message) the sentence is, word
    for word ("More heads, the same number of parameters", the notebook's heading): a heading
    pasted as the answer is a copy however short."""
    if len(stems) < MIN_LINE:
        return None
    return _lines(rubric, handouts).get(tuple(stems))


@_per_rubric
def _lines(rubric: Rubric, handouts: tuple[Handout, ...]) -> dict[tuple[str, ...], str]:
    """The stems of each sentence of a hand-out's lines -> the hand-out's name (from
    handouts_index.json where it holds them)."""
    stored = handout_index.stored_lines(rubric, handouts)
    return read_lines(rubric, handouts) if stored is None else stored


def read_lines(rubric: Rubric, handouts: tuple[Handout, ...]) -> dict[tuple[str, ...], str]:
    """The reading itself."""
    lines: dict[tuple[str, ...], str] = {}
    for handout in handouts:
        # Each line made a paragraph of its own (a blank line always ends a sentence): one
        # reading of the hand-out gives what reading it line by line gives, 30 times faster.
        # Each line is rewritten alone, as reading it alone would (a bracket left open at a
        # line's end must not reach into the next line).
        lines_text = _LINE_BREAK.join(rewrite(line) for line in handout.text.splitlines())
        for sentence in rubric.normaliser.sentences(lines_text, rewritten=True):
            line_stems = tuple(stem for _, stem in _content(sentence))
            if len(line_stems) >= MIN_LINE and not sentence.question:
                lines.setdefault(line_stems, handout.name)
    return lines


MIN_BESIDE = 2  # content words of a short sentence beside a copy, to call it copied too


MIN_CUT = 4  # content words of a sentence beside a copy that may leave out a stretch of its line


def _contained(
    rubric: Rubric, handouts: tuple[Handout, ...], stems: list[str], cut: bool = False
) -> bool:
    """The stems occur in a row in one of the hand-outs' sentences (``cut``: or in two rows of
    one sentence, a stretch between them left out, as a docstring's "Notation: n tokens, model
    width d_model, num_heads heads of width ..." pasted without its middle)."""
    texts = _sentence_texts(rubric, handouts)
    if f" {' '.join(stems)} " in texts:
        return True
    if not cut or len(stems) < MIN_CUT:
        return False
    for k in range(1, len(stems)):
        head, tail = f" {' '.join(stems[:k])} ", f" {' '.join(stems[k:])} "
        at = texts.find(head)
        while at >= 0:
            end = texts.find("\n", at)  # (one sentence a line)
            if texts.find(tail, at + len(head) - 1, len(texts) if end < 0 else end) >= 0:
                return True
            at = texts.find(head, at + 1)
    return False


@_per_rubric
def _sentence_texts(rubric: Rubric, handouts: tuple[Handout, ...]) -> str:
    """Each hand-out sentence's content stems, as one string with a space at either end (a
    hand-out's question too: "does every pair of heads still differ?" made a statement), one
    sentence a line: a run of stems (which hold no line break) found in it lies in one
    sentence, and one search of the whole costs less than one per sentence."""
    return "\n".join(
        f" {' '.join(stem for _, stem in _content(sentence))} "
        for _, sentence in _handout_sentences(rubric, handouts)
    )


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
