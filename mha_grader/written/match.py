"""Find a rubric's phrasings in an answer, with the polarity the answer gives them.

A phrasing matches when its words occur in order inside one sentence, each within ``gap``
non-filler tokens of the previous one. The match is *negated* when an odd number of negations
sits inside it (other than the phrasing's own, as in "can not attend"), just before it in the
same clause, or after it as a failure ("the split into equal heads fails"), counted together
with the stance of its clause (stance.py: denied, or what would happen otherwise). An affirmed
phrasing or a negated opposite supports the concept; a negated phrasing or an affirmed opposite
contradicts it. Words that are not the student's claim (someone else's, a cue, copied from a
hand-out) match nothing; a condition may support a concept, never contradict it. A match
overlapping a longer match of the same concept is ignored, so "a single head can not attend to
several tokens at once" is read as one claim. A rubric's ``neutral`` phrasings count for the
concept either way: "a single head can not attend to several relationships at once" and "eight
heads can" both name the capability at stake.

An opposite (a wrong claim) is read inside one clause. A phrasing may have its own ``unless``
words, be read ``across`` the whole answer (one fact per line of a note), or only ``alone`` as a
sentence of its own. reading.py reads the answer as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from .rubric import Concept, Phrasing, Vocabulary, vocabulary
from .stance import Stances, plain
from .text import FAILURES, POSSIBILITY, TYPO_MIN_LENGTH, Sentence, Token, small_typo

NEGATION_REACH = 5  # non-filler tokens before a match that a negation still applies from
SUBJECT_NEGATORS = frozenset({"nothing", "none", "nobody"})  # reach only the word right after them
ARTICLES = frozenset("a an the".split())
BRACKETS = frozenset("()")  # cost nothing between a phrasing's words: "256 (1 head) vs 256"


class Status(Enum):
    ABSENT = "absent"
    RECOGNISED = "recognised"
    CONTRADICTED = "contradicted"
    BOTH = "both"  # the answer asserts the idea and its opposite


@dataclass(frozen=True)
class Match:
    sentence: int
    positions: tuple[int, ...]  # the tokens the phrasing's words matched
    supports: bool
    neutral: bool  # from a phrasing that counts whether affirmed or negated
    possible: bool = False  # said as a possibility ("they might differ"), not as a finding
    supposed: bool = False  # in a condition or what would follow otherwise: never costs
    guessed: bool = False  # in a hedged clause ("I think", "maybe", "...?"): a claim all the same
    cited: bool = False  # what the course material is cited for: credited in part
    # what would happen otherwise ("..., otherwise the chunks are unequal"): the student's own
    # reasoning about what is required, not a supposition
    otherwise: bool = False

    @property
    def rank(self) -> tuple[int, int, int]:
        """More words, then a polar reading, then a tighter span: the better reading of a claim."""
        return (len(self.positions), not self.neutral, self.positions[0] - self.positions[-1])

    def overlaps(self, other: Match) -> bool:
        if self.sentence != other.sentence:
            return False
        if set(self.positions) & set(other.positions):
            return True
        a, b = (self.positions[0], self.positions[-1]), (other.positions[0], other.positions[-1])
        return (a[0] <= b[0] and b[1] <= a[1]) or (b[0] <= a[0] and a[1] <= b[1])


@lru_cache(maxsize=1 << 16)
def _typo_targets(word: str, stem: str, candidates: frozenset[tuple[str, str]]) -> frozenset[str]:
    """Stems of the accepted words that ``word`` is a small typo of (cached: the same words
    recur in every answer sheet)."""
    return frozenset(
        s
        for w, s in candidates
        if s != stem
        # either form of the answer's word against either form of the rubric's: "projecitons"
        # is the plural of a slip of "projection"
        and any(small_typo(x, y) for x in {word, stem} for y in {w, s})
    )


def _index(tokens: tuple[Token, ...], vocab: Vocabulary) -> dict[str, set[int]]:
    """Token positions by stem, a misspelt word also under the stems it is a typo of (notation
    and phrase tokens such as d_model and num_heads must be exact)."""
    by_stem: dict[str, set[int]] = {}
    for i, tok in enumerate(tokens):
        by_stem.setdefault(tok.stem, set()).add(i)
        if not tok.canonical and max(len(tok.word), len(tok.stem)) >= TYPO_MIN_LENGTH:
            for target in _typos(tok, vocab):
                by_stem.setdefault(target, set()).add(i)
    return by_stem


_NO_WORDS: frozenset[tuple[str, str]] = frozenset()


def _typos(tok: Token, vocab: Vocabulary) -> frozenset[str]:
    """The stems ``tok`` is a typo of, kept in the vocabulary: the union of its letters' words,
    a new set of hundreds each time, and the hash of it for ``_typo_targets`` were most of the
    cost of indexing a sentence."""
    key = (tok.word, tok.stem)
    found = vocab.typos.get(key)
    if found is None:
        candidates = vocab.get(tok.word[:1], _NO_WORDS) | vocab.get(tok.stem[:1], _NO_WORDS)
        found = vocab.typos[key] = _typo_targets(tok.word, tok.stem, candidates)
    return found


def _hits(tokens: tuple[Token, ...], slot: frozenset[str], memo: dict) -> set[int]:
    """Positions of the tokens that one slot (its accepted stems) accepts; do not modify: shared
    through ``memo``, where each slot is looked up once per sentence (the same slots, "head",
    "parameter", recur across many phrasings)."""
    found = memo.get(slot)
    if found is None:
        if "index" not in memo:
            memo["index"] = _index(tokens, memo["vocabulary"])
        index = memo["index"]
        found = set().union(*(index[s] for s in slot if s in index))
        memo[slot] = found
    return found


def _find(tokens: tuple[Token, ...], phrasing: Phrasing, memo: dict) -> list[list[int]]:
    """Every way the phrasing's slots occur in order with gaps of at most ``phrasing.gap``
    (punctuation costs nothing and breaks nothing in a phrasing read ``across`` the answer)."""
    found: list[list[int]] = []
    hits = []
    for slot in phrasing.stems:  # most phrasings miss a word: stop at the first missing one
        slot_hits = _hits(tokens, slot, memo)
        if not slot_hits:
            return found
        hits.append(slot_hits)

    def extend(positions: list[int]) -> None:
        if len(positions) == len(hits):
            found.append(positions)
            return
        gap, wanted = 0, hits[len(positions)]
        for i in range(positions[-1] + 1, len(tokens)):
            if (tokens[i].is_hard_break or _new_clause(tokens, i)) and not phrasing.across:
                return
            # an article names a head ("head a") only right after it: "heads agree on where a
            # token looks" names none
            if i in wanted and (tokens[i].word not in ARTICLES or i == positions[-1] + 1):
                extend([*positions, i])
            if phrasing.across and not tokens[i].word[0].isalnum():
                continue
            if not tokens[i].is_filler and tokens[i].word not in BRACKETS:
                gap += 1
                if gap > phrasing.gap:
                    return

    for i in sorted(hits[0]):
        extend([i])
    return found


# words that set a claim against the one before: in "not separate matrices but one shared Wq",
# the negation before "but" denies what it is contrasted with, not what follows
CONTRAST_WORDS = frozenset("but yet whereas however instead".split())


_JOINS = frozenset("and but while whereas".split())
_NEW_SUBJECT = frozenset("the they it we this these those there each every".split())


def _new_clause(tokens: tuple[Token, ...], i: int) -> bool:
    """A comma at ``i`` that opens a clause with a subject of its own (", and the softmax is
    ..."): a phrasing does not reach across it ("each head brings its own matrices, and the
    softmax is over all of d_model" says nothing of a head's own softmax)."""
    return (
        tokens[i].word == ","
        and i + 2 < len(tokens)
        and tokens[i + 1].word in _JOINS
        and tokens[i + 2].word in _NEW_SUBJECT
    )


def _negated(
    tokens: tuple[Token, ...], positions: list[int], phrasing: Phrasing, stance: Stances
) -> bool:
    own = {positions[i] for i in phrasing.negator_slots}
    contrast = next(
        (
            i
            for i in range(positions[-1] - 1, positions[0], -1)
            if tokens[i].word in CONTRAST_WORDS and not stance.cue[i]
        ),
        None,
    )
    if contrast is not None:
        # a match that reaches across a contrast ("not one per head but one shared Wq") says
        # what the part after it says: a negation before the contrast is the rejected side's
        inside = sum(
            1
            for i in range(contrast + 1, positions[-1] + 1)
            if tokens[i].is_negator and i not in own and i not in positions and not stance.cue[i]
        )
        # the phrasing's own negation found on the rejected side ("the count won't change, but
        # that is not the same as capability"): the kept side's negation is the phrasing's own
        inside -= min(inside, sum(1 for i in own if i < contrast))
        flip = stance.flips[positions[-1]]
        return (inside + _fails_after(tokens, positions[-1], stance) + flip) % 2 == 1
    inside = sum(
        1
        for i in range(positions[0], positions[-1] + 1)
        if tokens[i].is_negator and i not in own and i not in positions and not stance.cue[i]
    )
    flip = stance.flips[positions[0]]
    if flip % 2 and _only_when(tokens, positions):
        flip -= 1  # "a mistake to think they only differ after training": the "only" is denied
    if any(tokens[i].is_break for i in positions):
        return (inside + flip) % 2 == 1  # the phrasing opens its own clause ("even though ...")
    start = stance.clause_start[positions[0]]
    near, reach = 0, 0
    for i in range(positions[0] - 1, start - 1, -1):
        tok = tokens[i]
        if tok.is_negator and not stance.cue[i]:
            # "nothing is added by the split": a pronoun negates its own verb, not what follows;
            # in a counterfactual ("otherwise you can't cut the projected vectors into equal
            # pieces") the clause's negation reaches its whole predicate
            if (flip % 2 or reach < NEGATION_REACH) and (
                tok.word not in SUBJECT_NEGATORS or reach == 0
            ):
                near += 1
        elif not tok.is_filler:
            reach += 1
    return (inside + near + _fails_after(tokens, positions[-1], stance) + flip) % 2 == 1


# what restricts a claim to a time or a case: "only ... after training", "only ... once trained"
_ONLY = frozenset("only just".split())
_WHEN = frozenset("after when once until during".split())


def _only_when(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """The claim is said to hold only at some time ("they only differ after training"): a
    denial of the whole denies the restriction, not the claim."""
    first, last = positions[0], positions[-1]
    return (
        first > 0
        and tokens[first - 1].word in _ONLY
        and last + 1 < len(tokens)
        and tokens[last + 1].word in _WHEN
    )


def _fails_after(tokens: tuple[Token, ...], end: int, stance: Stances) -> int:
    """1 when the claim's clause goes on to say it fails ("the split into equal heads fails")."""
    clause = stance.clause_start[end]
    for i in range(end + 1, len(tokens)):
        if stance.clause_start[i] != clause:
            return 0
        if tokens[i].word in FAILURES:
            return 1
    return 0


SENTENCE_BREAK = Token(";", ";", True)


def whole_answer(sentences: list[Sentence], stances: list[Stances]) -> tuple[Sentence, Stances]:
    """The answer's statements as one run of tokens, for phrasings read ``across`` sentences;
    it is read as sentence number ``len(sentences)``, so its matches overlap no other."""
    tokens: list[Token] = []
    parts: list[Stances] = []
    for sentence, stance in zip(sentences, stances, strict=True):
        if not sentence.question:
            tokens += [*sentence.tokens, SENTENCE_BREAK]
            parts += [stance, plain(1)]
    joined = Stances(
        tuple(x for p in _offsets(parts) for x in p),
        *(tuple(x for p in parts for x in getattr(p, f)) for f in FIELDS),
        cited=tuple(x for p in parts for x in (p.cited or (False,) * len(p.cue))),
    )
    return Sentence(tuple(tokens), False), joined


FIELDS = ("reported", "flips", "hedged", "supposed", "otherwise", "cue")


def _offsets(parts: list[Stances]) -> list[tuple[int, ...]]:
    """Each part's clause starts, shifted to where the part begins in the joined run."""
    shifted, at = [], 0
    for p in parts:
        shifted.append(tuple(at + c for c in p.clause_start))
        at += len(p.cue)
    return shifted


def phrasing_matches(
    phrasings: tuple[Phrasing, ...],
    sentences: list[Sentence],
    memos: list[dict] | None,
    asserted: bool,
    neutral: bool,
    stances: Sequence[Stances] | None = None,
    hidden: Sequence[frozenset[int]] | None = None,
) -> list[Match]:
    """``memos`` has one memo per sentence and one for ``whole_answer`` (made here if None);
    ``stances`` one per sentence (all asserted if None); ``hidden`` the tokens of each sentence
    that count for nothing (copied from a hand-out)."""
    if memos is None:
        memos = [{"vocabulary": vocabulary(phrasings)} for _ in range(len(sentences) + 1)]
    if stances is None:
        stances = [plain(len(s.tokens)) for s in sentences]
    hidden = hidden or [frozenset()] * len(sentences)
    matches = []
    # a question asked back (often the prompt pasted) asserts nothing
    statements = [(i, s, stances[i], hidden[i]) for i, s in enumerate(sentences) if not s.question]
    whole = None
    in_answer = _AnswerSlots.of(statements, memos)
    for phrasing in phrasings:
        if not all(map(in_answer.__getitem__, phrasing.stems)):
            continue  # (most phrasings: a word of theirs is in no sentence)
        where = statements
        if phrasing.across:
            if whole is None:
                joined, joined_stance = whole_answer(sentences, list(stances))
                whole = [(len(sentences), joined, joined_stance, frozenset())]
            where = whole
        for s_index, sentence, stance, unseen in where:
            tokens = sentence.tokens
            for positions in _find(tokens, phrasing, memos[s_index]):
                if not stance.claimed(positions) or 2 * len(unseen.intersection(positions)) >= len(
                    positions
                ):
                    continue  # someone else's claim, a cue's words, or copied
                if phrasing.unless and _about_else(tokens, positions, phrasing.unless):
                    continue
                if phrasing.alone and not _alone(tokens, positions):
                    continue
                negated = not neutral and _negated(tokens, positions, phrasing, stance)
                supports = asserted != negated
                supposed = any(stance.supposed[i] for i in positions)
                otherwise = any(stance.otherwise[i] for i in positions)
                if otherwise:
                    # what would happen otherwise names the idea at stake, whichever way it is
                    # put ("..., otherwise the features can't be cut equally"), and claims
                    # nothing wrong
                    supports, supposed = True, True
                matches.append(
                    Match(
                        s_index,
                        tuple(positions),
                        supports,
                        neutral,
                        _possible(tokens, positions),
                        supposed,
                        any(stance.hedged[i] for i in positions),
                        bool(stance.cited) and all(stance.cited[i] for i in positions),
                        otherwise,
                    )
                )
    return matches


class _AnswerSlots(dict[frozenset[str], bool]):
    """slot -> whether it accepts some token of the answer's statements: a phrasing one of
    whose slots accepts none matches in no sentence, nor across them. The stems the statements
    hold (typos read as what they are slips of, as ``_index`` reads them) are gathered once per
    answer, and each slot is asked once; kept in the memo of the whole answer."""

    def __init__(self, present: set[str]):
        super().__init__()
        self.present = present

    def __missing__(self, slot: frozenset[str]) -> bool:
        found = self[slot] = not self.present.isdisjoint(slot)
        return found

    @classmethod
    def of(
        cls, statements: list[tuple[int, Sentence, Stances, frozenset[int]]], memos: list[dict]
    ) -> _AnswerSlots:
        memo = memos[-1]
        found = memo.get("slots")
        if found is None:
            present = {SENTENCE_BREAK.stem}  # (what joins them, read across)
            for s_index, sentence, _, _ in statements:
                sentence_memo = memos[s_index]
                if "index" not in sentence_memo:
                    sentence_memo["index"] = _index(sentence.tokens, sentence_memo["vocabulary"])
                present.update(sentence_memo["index"])
            found = memo["slots"] = cls(present)
        return found


def _possible(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """A possibility word in the match's clause, before or inside it ("they might differ")."""
    for i in range(positions[-1], -1, -1):
        if tokens[i].is_break and i < positions[0]:
            return False
        if tokens[i].word in POSSIBILITY:
            return True
    return False


def best(matches: list[Match]) -> list[Match]:
    """Where two readings of the same words overlap, only the better one counts: "does not lose
    the ability to attend to several tokens" is one (negated) claim, not two."""
    ranks = [m.rank for m in matches]
    return [
        m
        for m, r in zip(matches, ranks, strict=True)
        if not any(ro > r and o.overlaps(m) for o, ro in zip(matches, ranks, strict=True))
    ]


def all_matches(
    concept: Concept,
    sentences: list[Sentence],
    memos: list[dict] | None = None,
    stances: Sequence[Stances] | None = None,
    hidden: Sequence[frozenset[int]] | None = None,
) -> list[Match]:
    """Every reading of the concept in the answer (overlapping ones included)."""
    matches = phrasing_matches(concept.phrasings, sentences, memos, True, False, stances, hidden)
    # a wrong claim is read inside one clause: "256 parameters, so adding a head cost nothing"
    # does not say that heads add parameters
    matches += [
        m
        for m in phrasing_matches(
            concept.opposites, sentences, memos, False, False, stances, hidden
        )
        if not _crosses_clause(sentences, m)
    ]
    matches += phrasing_matches(concept.neutral, sentences, memos, True, True, stances, hidden)
    return matches


def _crosses_clause(sentences: list[Sentence], match: Match) -> bool:
    if match.sentence == len(sentences):
        return False  # read across the whole answer on purpose
    tokens = sentences[match.sentence].tokens
    return any(
        tokens[i].is_break and tokens[i].word not in BRACKETS
        for i in range(match.positions[0] + 1, match.positions[-1])
    )


def unclaimed(matches: list[Match], claimed: list[Match]) -> list[Match]:
    return [m for m in best(matches) if not any(c.overlaps(m) for c in claimed)]


def status_of(matches: list[Match]) -> Status:
    supported = any(m.supports for m in matches)
    contradicted = any(not m.supports for m in matches)
    if supported and contradicted:
        return Status.BOTH
    if supported:
        return Status.RECOGNISED
    if contradicted:
        return Status.CONTRADICTED
    return Status.ABSENT


BARE_ANSWERS = frozenset("yes yep yeah no nope nah".split())


def _alone(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """The match is the whole sentence, but for filler words, punctuation and an opening bare
    answer ("No, shared." answering "Per-head W?")."""
    bare = len(tokens) > 1 and tokens[0].word in BARE_ANSWERS and tokens[1].is_break
    return all(
        i in positions or tok.is_filler or not tok.word[0].isalnum() or (bare and i == 0)
        for i, tok in enumerate(tokens)
    )


UNLESS_REACH = 2  # tokens after a match that a phrasing's ``unless`` words are looked for


def _about_else(tokens: tuple[Token, ...], positions: list[int], unless: frozenset[str]) -> bool:
    """An ``unless`` word inside the match, or just after it in the same clause."""
    if any(tokens[i].stem in unless for i in range(positions[0], positions[-1] + 1)):
        return True
    for i in range(positions[-1] + 1, min(len(tokens), positions[-1] + 1 + UNLESS_REACH)):
        if tokens[i].is_break:
            return False
        if tokens[i].stem in unless:
            return True
    return False
