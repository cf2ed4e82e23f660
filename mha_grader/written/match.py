"""Find a rubric's concepts in an answer, with the polarity the answer gives them.

A phrasing matches when its words occur in order inside one sentence, each within ``gap``
non-filler tokens of the previous one. The match is *negated* when an odd number of negations
sits inside it (other than the phrasing's own, as in "can not attend") or just before it in the
same clause. An affirmed phrasing or a negated opposite supports the concept; a negated phrasing
or an affirmed opposite contradicts it. A match overlapping a longer match of the same concept
is ignored, so "a single head can not attend to several tokens at once" is read as one claim.
A rubric's ``neutral`` phrasings count for the concept either way: "a single head can not attend
to several relationships at once" and "eight heads can" both name the capability at stake.

An opposite (a wrong claim) is read inside one clause. A phrasing may have its own ``unless``
words, be read ``across`` the whole answer (one fact per line of a note), or only ``alone`` as a
sentence of its own.

Then, for the answer as a whole (``read_concepts``): a sentence that copies the question states
nothing; a misconception it asserts claims its words from the concepts (one that yields to a
longer right reading of the same words is kept as ``doubtful``); a yes/no question's plain
answer said only as a guess, with nothing to back it, is dropped; a bare "No." answers a yes/no
question, and one the rest of the answer contradicts makes the concept both said and denied; an
idea implied by others counts; one that requires another counts only with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from enum import Enum
from functools import cache, lru_cache

from .rubric import Concept, Misconception, Phrasing, Rubric, Vocabulary, vocabulary
from .text import CLAUSE_NEGATORS, HEDGES, NEGATORS, Sentence, Token

NEGATION_REACH = 5  # non-filler tokens before a match that a negation still applies from
SUBJECT_NEGATORS = frozenset({"nothing", "none", "nobody"})  # reach only the word right after them
BRACKETS = frozenset("()")  # cost nothing between a phrasing's words: "256 (1 head) vs 256"
TYPO_MIN_LENGTH = 5  # shorter words must be spelled right: too many real words are one edit apart
TYPO_MIN_RATIO = 0.88


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
    hedged: bool = False  # said as a possibility ("they might differ"), not as a finding

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


@cache
def small_typo(a: str, b: str) -> bool:
    """A small typo: same first letter and a high similarity ratio, on words of some length."""
    if min(len(a), len(b)) < TYPO_MIN_LENGTH or a[0] != b[0]:
        return False
    return SequenceMatcher(None, a, b).ratio() >= TYPO_MIN_RATIO


@lru_cache(maxsize=1 << 16)
def _typo_targets(word: str, stem: str, candidates: frozenset[tuple[str, str]]) -> frozenset[str]:
    """Stems of the accepted words that ``word`` is a small typo of (cached: the same words
    recur in every answer sheet)."""
    return frozenset(
        s for w, s in candidates if s != stem and (small_typo(word, w) or small_typo(stem, s))
    )


def _index(tokens: tuple[Token, ...], vocab: Vocabulary) -> dict[str, set[int]]:
    """Token positions by stem, a misspelt word also under the stems it is a typo of (notation
    and phrase tokens such as d_model and num_heads must be exact)."""
    by_stem: dict[str, set[int]] = {}
    empty: frozenset[tuple[str, str]] = frozenset()
    for i, tok in enumerate(tokens):
        by_stem.setdefault(tok.stem, set()).add(i)
        if not tok.canonical and max(len(tok.word), len(tok.stem)) >= TYPO_MIN_LENGTH:
            candidates = vocab.get(tok.word[:1], empty) | vocab.get(tok.stem[:1], empty)
            for target in _typo_targets(tok.word, tok.stem, candidates):
                by_stem.setdefault(target, set()).add(i)
    return by_stem


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
            if tokens[i].is_hard_break and not phrasing.across:
                return
            if i in wanted:
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


def _negated(tokens: tuple[Token, ...], positions: list[int], phrasing: Phrasing) -> bool:
    own = {positions[i] for i in phrasing.negator_slots}
    inside = sum(
        1
        for i in range(positions[0], positions[-1] + 1)
        if tokens[i].is_negator and i not in own and i not in positions
    )
    if any(tokens[i].is_break for i in positions):
        return inside % 2 == 1  # the phrasing opens its own clause ("even though ...")
    near, anywhere, reach = 0, 0, 0
    start = 0  # where the clause of the match begins
    for i in range(positions[0] - 1, -1, -1):
        tok = tokens[i]
        if tok.is_break:
            start = i + 1
            break
        if tok.is_negator and tok.word not in CLAUSE_NEGATORS:
            anywhere += 1
            # "nothing is added by the split": a pronoun negates its own verb, not what follows
            if reach < NEGATION_REACH and (tok.word not in SUBJECT_NEGATORS or reach == 0):
                near += 1
        elif not tok.is_filler:
            reach += 1
    # "otherwise you can not cut the vectors into equal pieces" says they can be cut, and so
    # does "otherwise d_head is not an integer, and the features can not be shared out
    # equally": "otherwise" makes the rest of the statement counterfactual, every clause of it,
    # and each clause's negation counts at any distance
    if any(t.word in CLAUSE_NEGATORS for t in _statement(tokens, positions[0])):
        before = anywhere + 1
    else:
        before = near
    if start and _counterfactual(tokens[: start - 1]):
        before += 1  # "if not, you can not split the features equally"
    return (inside + before) % 2 == 1


def _statement(tokens: tuple[Token, ...], end: int) -> tuple[Token, ...]:
    """The tokens before ``end`` back to the last hard break: the statement the match is in."""
    start = max((i + 1 for i in range(end) if tokens[i].is_hard_break), default=0)
    return tokens[start:end]


def _counterfactual(clause: tuple[Token, ...]) -> bool:
    """The clause right before the match's is a short one that negates the condition: "If not,
    ...", "If it is not, ...", "Otherwise, ..." (``clause`` ends just before their break)."""
    first = max((i + 1 for i, t in enumerate(clause) if t.is_break), default=0)
    words = [t.word for t in clause[first:]]
    if words == ["else"]:
        return True
    # "If I'm not mistaken, ..." is about the writer, not a condition on the claim
    return (
        2 <= len(words) <= 5
        and words[0] == "if"
        and words[1] != "i"
        and any(w in NEGATORS for w in words)
    )


SENTENCE_BREAK = Token(";", ";", True)


def whole_answer(sentences: list[Sentence]) -> Sentence:
    """The answer's statements as one run of tokens, for phrasings read ``across`` sentences;
    it is read as sentence number ``len(sentences)``, so its matches overlap no other."""
    tokens: list[Token] = []
    for sentence in sentences:
        if not sentence.question:
            tokens += [*sentence.tokens, SENTENCE_BREAK]
    return Sentence(tuple(tokens), False)


def _phrasing_matches(
    phrasings: tuple[Phrasing, ...],
    sentences: list[Sentence],
    memos: list[dict] | None,
    asserted: bool,
    neutral: bool,
) -> list[Match]:
    """``memos`` has one memo per sentence and one for ``whole_answer`` (made here if None)."""
    if memos is None:
        memos = [{"vocabulary": vocabulary(phrasings)} for _ in range(len(sentences) + 1)]
    matches = []
    # a question asked back (often the prompt pasted) asserts nothing
    statements = [(i, s) for i, s in enumerate(sentences) if not s.question]
    whole = None
    for phrasing in phrasings:
        where = statements
        if phrasing.across:
            whole = whole or [(len(sentences), whole_answer(sentences))]
            where = whole
        for s_index, sentence in where:
            tokens = sentence.tokens
            for positions in _find(tokens, phrasing, memos[s_index]):
                if phrasing.unless and _about_else(tokens, positions, phrasing.unless):
                    continue
                if phrasing.alone and not _alone(tokens, positions):
                    continue
                negated = not neutral and _negated(tokens, positions, phrasing)
                hedged = _hedged(tokens, positions)
                matches.append(
                    Match(s_index, tuple(positions), asserted != negated, neutral, hedged)
                )
    return matches


def _hedged(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """A possibility word in the match's clause, before or inside it."""
    for i in range(positions[-1], -1, -1):
        if tokens[i].is_break and i < positions[0]:
            return False
        if tokens[i].word in HEDGES:
            return True
    return False


def _best(matches: list[Match]) -> list[Match]:
    """Where two readings of the same words overlap, only the better one counts: "does not lose
    the ability to attend to several tokens" is one (negated) claim, not two."""
    ranks = [m.rank for m in matches]
    return [
        m
        for m, r in zip(matches, ranks, strict=True)
        if not any(ro > r and o.overlaps(m) for o, ro in zip(matches, ranks, strict=True))
    ]


def _all_matches(
    concept: Concept, sentences: list[Sentence], memos: list[dict] | None
) -> list[Match]:
    matches = _phrasing_matches(concept.phrasings, sentences, memos, True, False)
    # a wrong claim is read inside one clause: "256 parameters, so adding a head cost nothing"
    # does not say that heads add parameters
    matches += [
        m
        for m in _phrasing_matches(concept.opposites, sentences, memos, False, False)
        if not _crosses_clause(sentences, m)
    ]
    matches += _phrasing_matches(concept.neutral, sentences, memos, True, True)
    return matches


def _crosses_clause(sentences: list[Sentence], match: Match) -> bool:
    if match.sentence == len(sentences):
        return False  # read across the whole answer on purpose
    tokens = sentences[match.sentence].tokens
    return any(
        tokens[i].is_break and tokens[i].word not in BRACKETS
        for i in range(match.positions[0] + 1, match.positions[-1])
    )


def _unclaimed(matches: list[Match], claimed: list[Match]) -> list[Match]:
    return [m for m in _best(matches) if not any(c.overlaps(m) for c in claimed)]


def _status(matches: list[Match]) -> Status:
    supported = any(m.supports for m in matches)
    contradicted = any(not m.supports for m in matches)
    if supported and contradicted:
        return Status.BOTH
    if supported:
        return Status.RECOGNISED
    if contradicted:
        return Status.CONTRADICTED
    return Status.ABSENT


def concept_matches(
    concept: Concept,
    sentences: list[Sentence],
    memos: list[dict] | None = None,
    claimed: list[Match] = (),
) -> list[Match]:
    """The concept's readings in the answer, less those on words ``claimed`` by a misconception
    the answer asserts."""
    return _unclaimed(_all_matches(concept, sentences, memos), claimed)


def concept_status(
    concept: Concept,
    sentences: list[Sentence],
    memos: list[dict] | None = None,
    claimed: list[Match] = (),
) -> Status:
    return _status(concept_matches(concept, sentences, memos, claimed))


@dataclass(frozen=True)
class Reading:
    status: dict[str, Status]  # each concept's
    misconceptions: tuple[Misconception, ...]  # the wrong ideas the answer asserts
    held: frozenset[str]  # recognised, but not counted: a concept they require is missing
    # wrong ideas whose words also read, at greater length, as a right one ("head 0 only sees
    # the first tokens, head 1 the last" is a sequence split and evidence that heads differ)
    doubtful: tuple[Misconception, ...] = ()


def _misconception_matches(
    rubric: Rubric, sentences: list[Sentence], memos: list[dict], readings: list[Match]
) -> tuple[dict[str, list[Match]], set[str]]:
    """Asserted misconceptions and the words they claim, and those that yield: a misconception
    yields to a longer ``reading`` of the same words as a concept (the grader cannot tell
    which one the answer means, so a teacher is asked)."""
    found: dict[str, list[Match]] = {}
    yielded: set[str] = set()
    for mis in rubric.misconceptions:
        for m in _best(_phrasing_matches(mis.phrasings, sentences, memos, True, False)):
            if not m.supports:
                continue
            if any(o.overlaps(m) and len(o.positions) > len(m.positions) for o in readings):
                yielded.add(mis.id)
            else:
                found.setdefault(mis.id, []).append(m)
    return found, yielded - set(found)


def _alone(tokens: tuple[Token, ...], positions: list[int]) -> bool:
    """The match is the whole sentence, but for filler words and punctuation."""
    return all(
        i in positions or tok.is_filler or not tok.word[0].isalnum() for i, tok in enumerate(tokens)
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


YES = frozenset("yes yep yeah yup".split())
NO = frozenset("no nope nah".split())


def _yes_no(sentences: list[Sentence]) -> str | None:
    """The answer's bare yes or no, when it opens with one ("No. ...", "Nope, ..."; not "No head
    has ...", where "no" belongs to the claim)."""
    first = next((s for s in sentences if not s.question and s.tokens), None)
    if first is None or (len(first.tokens) > 1 and not first.tokens[1].is_break):
        return None
    word = first.tokens[0].word
    return "yes" if word in YES else "no" if word in NO else None


COPY_MIN_WORDS = 4  # shorter sentences ("what did you find") are too common to call a copy
COPY_CLAUSE_SHARE = 0.9  # of a clause of the question, from its first word, to be a copy of it
COPY_OTHER_SHARE = 0.2  # of the sentence's words may come from outside the question


def copies_prompt(sentence: Sentence, clauses: tuple[tuple[str, ...], ...]) -> bool:
    """The sentence is the question copied, question mark or not: it holds a whole clause of
    the question from its first word ("does each head have its own projection matrices"), and
    little else. "Each head has its own projection matrices" is a claim: the question's
    clause begins with "does". A negation the question does not have makes it a claim too."""
    if any(t.is_negator for t in sentence.tokens):
        return False
    words = [t.stem for t in sentence.tokens if t.word[0].isalnum()]
    if len(words) < COPY_MIN_WORDS:
        return False
    vocabulary = {w for clause in clauses for w in clause}
    if sum(w not in vocabulary for w in words) > COPY_OTHER_SHARE * len(words):
        return False  # most sentences: too many words the question does not have
    covered = [False] * len(words)
    whole = False
    for clause in clauses:
        blocks = SequenceMatcher(None, words, clause, autojunk=False).get_matching_blocks()
        if sum(b.size for b in blocks) >= COPY_CLAUSE_SHARE * len(clause) and any(
            b.b == 0 and b.size for b in blocks
        ):
            whole = True
        for b in blocks:
            covered[b.a : b.a + b.size] = [True] * b.size
    return whole and covered.count(False) <= COPY_OTHER_SHARE * len(words)


def read_concepts(rubric: Rubric, text: str) -> Reading:
    """What the answer says about each concept. A concept implied by others it names counts as
    recognised; one whose ``requires`` are not all recognised counts as absent (evidence for a
    claim the answer does not make is no evidence)."""
    sentences = [
        replace(s, question=True) if copies_prompt(s, rubric.prompt_clauses) else s
        for s in rubric.normaliser.sentences(text)
    ]
    # word look-ups shared by every phrasing of the rubric, one memo per sentence
    memos: list[dict] = [{"vocabulary": rubric.vocabulary} for _ in range(len(sentences) + 1)]
    matches = {c.id: _all_matches(c, sentences, memos) for c in rubric.concepts}
    # The plain answer to a yes/no question said only as a guess, with nothing else to back it
    # ("they might differ"), is no answer; "maybe" and "I think" beside ideas the answer states
    # ("maybe from one projection shared by all heads") change nothing.
    guesses = [
        c.id
        for c in rubric.concepts
        if c.yes_no and all(m.hedged for m in matches[c.id] if m.supports)
    ]
    backed = any(m.supports for k, ms in matches.items() if k not in guesses for m in ms)
    if not backed:
        for k in guesses:
            matches[k] = [m for m in matches[k] if not m.supports]
    wrong, yielded = _misconception_matches(
        rubric, sentences, memos, [m for ms in matches.values() for m in ms]
    )
    claimed = [m for ms in wrong.values() for m in ms]
    status = {k: _status(_unclaimed(ms, claimed)) for k, ms in matches.items()}
    said = _yes_no(sentences)
    for c in rubric.concepts:
        if not (c.yes_no and said):
            continue
        if status[c.id] is Status.ABSENT:
            status[c.id] = Status.RECOGNISED if said == c.yes_no else Status.CONTRADICTED
        elif (status[c.id] is Status.RECOGNISED) != (said == c.yes_no):
            # "Yes, they differ": the bare answer and the rest of it disagree
            status[c.id] = Status.BOTH
    for c in rubric.concepts:
        if status[c.id] is Status.ABSENT and any(
            all(status[i] is Status.RECOGNISED for i in group) for group in c.implied_by
        ):
            status[c.id] = Status.RECOGNISED
    held = set()
    for c in rubric.concepts:
        if status[c.id] is Status.RECOGNISED and any(
            status[r] is not Status.RECOGNISED for r in c.requires
        ):
            status[c.id] = Status.ABSENT
            held.add(c.id)
    return Reading(
        status,
        tuple(m for m in rubric.misconceptions if m.id in wrong),
        frozenset(held),
        tuple(m for m in rubric.misconceptions if m.id in yielded),
    )
