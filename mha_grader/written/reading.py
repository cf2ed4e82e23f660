"""Read an answer as a whole: what it claims about each of a rubric's concepts.

In order: a sentence that copies the question states nothing, nor does a part copied from a
hand-out (copies.py); each clause gets the student's stance (stance.py), so only what the
student claims counts; a bare "it" that stands for d_model or num_heads is read as that quantity
(``resolve_it``); a misconception the answer asserts, in any question, claims its words
from the concepts (one that yields to a longer right reading of the same words is kept as
``doubtful``); what
follows from a condition that states a wrong idea ("if each head had its own matrices, the count
would double") is supposed, not claimed; a yes/no question's plain answer said only as a
possibility, with nothing to back it, is dropped; a bare "No." answers a yes/no question, and one
the rest of the answer contradicts makes the concept both said and denied; an idea implied by
others counts; one that requires another counts only with it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from .copies import find_copies
from .cues import AUXILIARIES, SCARE_QUOTES
from .match import Match, Status, all_matches, best, phrasing_matches, status_of, unclaimed
from .rubric import Misconception, Rubric
from .stance import Stances, read_stances, unendorsed_quotations
from .text import Sentence, Token, split_sentences, unrecord


@dataclass(frozen=True)
class Reading:
    status: dict[str, Status]  # each concept's
    misconceptions: tuple[Misconception, ...]  # the wrong ideas the answer asserts
    held: frozenset[str]  # recognised, but not counted: a concept they require is missing
    # wrong ideas whose words also read, at greater length, as a right one ("head 0 only sees
    # the first tokens, head 1 the last" is a sequence split and evidence that heads differ)
    doubtful: tuple[Misconception, ...] = ()
    copied: tuple[tuple[str, str], ...] = ()  # (hand-out, the answer's copied words), in order
    guessed: frozenset[str] = frozenset()  # recognised only in hedged clauses ("maybe", "?")
    # recognised only as what the course material says ("according to the notebook, ...")
    cited: frozenset[str] = frozenset()
    # recognised in a clause of its own, apart from every clause that states a misconception
    # ("more heads give more softmaxes, but each head sees fewer tokens"): a right idea the
    # wrong one does not touch
    apart: frozenset[str] = frozenset()


def _misconception_matches(
    rubric: Rubric,
    sentences: list[Sentence],
    memos: list[dict],
    stances: list[Stances],
    hidden: list[frozenset[int]],
    readings: list[Match],
) -> tuple[dict[str, list[Match]], set[str], list[Match], list[Match]]:
    """Asserted misconceptions and the words they claim, and those that yield: a misconception
    yields to a longer ``reading`` of the same words as a concept (the grader cannot tell which
    one the answer means, so a teacher is asked). The third list: those stated in a condition
    (not claimed); the fourth: those denied ("it's not about each head getting its own part of
    the sequence"), whose words deny that wrong idea, not a concept that shares them."""
    found: dict[str, list[Match]] = {}
    yielded: set[str] = set()
    supposed: list[Match] = []  # stated in a condition: not claimed
    denied: list[Match] = []
    for mis in rubric.misconceptions:
        matches = phrasing_matches(mis.phrasings, sentences, memos, True, False, stances, hidden)
        for m in best(matches):
            if mis.reason and m.otherwise:
                m = replace(m, supposed=False)  # the student's reason for what is required
            if m.supports and m.supposed:
                supposed.append(m)
            if not m.supports and not m.supposed:
                denied.append(m)
            if not m.supports or m.supposed:
                continue
            if any(o.overlaps(m) and len(o.positions) > len(m.positions) for o in readings):
                yielded.add(mis.id)
            else:
                found.setdefault(mis.id, []).append(m)
    return found, yielded - set(found), supposed, denied


def _beside_doubt(m: Match, stances: list[Stances]) -> bool:
    """The match, itself asserted, follows a denial or a doubt in its sentence."""
    if m.sentence >= len(stances):
        return False
    st = stances[m.sentence]
    if any(st.flips[i] % 2 for i in m.positions):
        return False
    return any(st.flips[i] % 2 for i in range(m.positions[0]))


def _supposed_consequences(stances: list[Stances], wrong: list[Match]) -> set[tuple[int, int]]:
    """(sentence, token) of what follows from a condition that states a wrong idea: "if each
    head had its own matrices, the count would double" reasons from a supposition the student
    does not hold, so the doubling is not claimed either."""
    found = set()
    for m in wrong:
        for condition, consequence in (
            stances[m.sentence].conditions if m.sentence < len(stances) else ()
        ):
            if m.positions[0] in condition:
                found.update((m.sentence, i) for i in consequence)
    return found


def _drop_supposed(matches: list[Match], supposed: set[tuple[int, int]]) -> list[Match]:
    return [
        m
        for m in matches
        if m.supports or not any((m.sentence, i) in supposed for i in m.positions)
    ]


YES = frozenset("yes yep yeah yup".split())
NO = frozenset("no nope nah".split())
# Words after which an opening yes or no is still the bare answer, typed without its comma ("No
# they differ", "Yes they're the same"): a pronoun or an article cannot follow a "no" that
# belongs to the claim ("No head has ...")
BARE_AFTER = frozenset("they it we i the these those both".split())


def _yes_no(sentences: list[Sentence]) -> str | None:
    """The answer's bare yes or no, when it opens with one ("No. ...", "Nope, ..."; not "No head
    has ...", where "no" belongs to the claim)."""
    first = next((s for s in sentences if not s.question and s.tokens), None)
    if first is not None and (reply := _elliptic_reply([t.word for t in first.tokens])):
        return reply
    if first is None or (
        len(first.tokens) > 1
        and not first.tokens[1].is_break
        and first.tokens[1].word not in BARE_AFTER
    ):
        return None
    word = first.tokens[0].word
    return "yes" if word in YES else "no" if word in NO else None


ELLIPTIC_SUBJECTS = frozenset("they it both".split())


def _elliptic_reply(words: list[str]) -> str | None:
    """A sentence that only answers the question, its verb left out: "They do not." is no,
    "It does." yes (a subject pronoun and an auxiliary, nothing else)."""
    if len(words) not in (2, 3) or words[0] not in ELLIPTIC_SUBJECTS:
        return None
    if words[1] not in AUXILIARIES or (len(words) == 3 and words[2] not in ("not", "never")):
        return None
    return "no" if len(words) == 3 else "yes"


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


COPIED_EXCERPT_WORDS = 8  # of a copied part, quoted back in the feedback

# The quantities a bare "it" stands for in these answers: "any head count works? It doesn't:
# it must divide d_model", "d_model has to be divisible by it".
REFERENTS = frozenset({"num_heads", "d_model"})


def resolve_it(sentences: list[Sentence], stances: list[Stances]) -> list[Sentence]:
    """Each "it" (not a cue's word) that stands for d_model or num_heads read as that quantity:
    an "it" that opens a clause after a clause whose subject is one of them is that subject
    ("d_model need not equal num_heads; it just has to be divisible by ..."); an "it" in a
    clause that names one of them is the other one, when the answer named it before ("d_model
    has to be divisible by it", "it must divide d_model"). Any other "it" stays ("that it owns",
    "it is a reshape")."""
    named: list[Token] = []  # mentions of a referent, in order
    subject: Token | None = None  # the referent that opened the clause before
    resolved = []
    for sentence, stance in zip(sentences, stances, strict=True):
        tokens = list(sentence.tokens)
        starts = stance.clause_start
        opened: Token | None = None  # the referent that opens the current clause
        for i, tok in enumerate(sentence.tokens):
            if i == starts[i] or (i and starts[i] != starts[i - 1]):
                subject, opened = opened or subject, None
            if tok.word == "it" and not stance.cue[i]:
                own = {
                    t.word for j, t in enumerate(tokens) if starts[j] == starts[i] and j != i
                } & REFERENTS
                referent = None
                if i == starts[i] and subject is not None and not own:
                    referent = subject
                elif own:
                    referent = next((t for t in reversed(named) if t.word not in own), None)
                if referent is not None:
                    tokens[i] = tok = referent
            if tok.word in REFERENTS:
                named.append(tok)
                if opened is None and i == starts[i]:
                    opened = tok
        subject = opened or subject
        changed = tokens != list(sentence.tokens)
        resolved.append(replace(sentence, tokens=tuple(tokens)) if changed else sentence)
    return resolved


def read_concepts(rubric: Rubric, text: str) -> Reading:
    """What the answer says about each concept. A concept implied by others it names counts as
    recognised; one whose ``requires`` are not all recognised counts as absent (evidence for a
    claim the answer does not make is no evidence)."""
    sentences = written = rubric.normaliser.sentences(text)
    pasted = [copies_prompt(s, rubric.prompt_clauses) for s in sentences]
    plain = unrecord(text)  # (a record's quotation marks quote nothing)
    quoted = unendorsed_quotations(plain, rubric.normaliser.sentences)
    stances = read_stances(sentences, pasted, len(SCARE_QUOTES.findall(plain)), quoted)
    # a question asked back (or the question pasted) asserts nothing, unless answered after it
    sentences = [replace(s, question=st.asks) for s, st in zip(sentences, stances, strict=True)]
    copies = find_copies(rubric, sentences)
    hidden = [frozenset()] * len(sentences)
    for c in copies:
        hidden[c.sentence] = hidden[c.sentence] | c.positions
    sentences = resolve_it(sentences, stances)
    # word look-ups shared by every phrasing of the rubric, one memo per sentence
    memos: list[dict] = [{"vocabulary": rubric.vocabulary} for _ in range(len(sentences) + 1)]
    matches = {c.id: all_matches(c, sentences, memos, stances, hidden) for c in rubric.concepts}
    # The plain answer to a yes/no question said only as a possibility, with nothing else to
    # back it ("they might differ"), is no answer; a belief ("I think they differ", "maybe
    # they differ?") is the student's claim, and so is a possibility beside ideas the answer
    # states ("maybe from one projection shared by all heads").
    guesses = [
        c.id
        for c in rubric.concepts
        if c.yes_no and all(m.possible for m in matches[c.id] if m.supports)
    ]
    # a possibility offered beside a doubt or a denial ("I'm not convinced anything changes; the
    # heads might just compute the same thing in smaller pieces") is the doubter's alternative,
    # not a finding
    matches = {
        k: [m for m in ms if not (m.supports and m.possible and _beside_doubt(m, stances))]
        for k, ms in matches.items()
    }
    # an answer that only supposes ("if the heads look at different slices, their patterns
    # should differ") asserts nothing: a condition earns beside a claim of the answer's own
    if not any(
        m.supports and (m.otherwise or not m.supposed) for ms in matches.values() for m in ms
    ):
        matches = {k: [m for m in ms if m.otherwise or not m.supposed] for k, ms in matches.items()}
    backed = any(m.supports for k, ms in matches.items() if k not in guesses for m in ms)
    if not backed:
        for k in guesses:
            matches[k] = [m for m in matches[k] if not m.supports]
    readings = [m for ms in matches.values() for m in ms]
    wrong, yielded, supposed_wrong, denied_wrong = _misconception_matches(
        rubric, sentences, memos, stances, hidden, readings
    )
    # a wrong idea denied is no denial of a concept read on the same words (no longer reading)
    matches = {
        k: [
            m
            for m in ms
            if m.supports
            or not any(d.overlaps(m) and len(d.positions) >= len(m.positions) for d in denied_wrong)
        ]
        for k, ms in matches.items()
    }
    # a condition claims nothing wrong, nor what follows from a wrong one
    supposed = _supposed_consequences(
        stances, [m for m in readings if m.supposed and not m.supports] + supposed_wrong
    )
    matches = {
        k: _drop_supposed([m for m in ms if m.supports or not m.supposed], supposed)
        for k, ms in matches.items()
    }
    wrong = {
        k: kept
        for k, ms in wrong.items()
        if (kept := [m for m in ms if not any((m.sentence, i) in supposed for i in m.positions)])
    }
    claimed = [m for ms in wrong.values() for m in ms]
    counted = {k: unclaimed(ms, claimed) for k, ms in matches.items()}
    status = {k: status_of(ms) for k, ms in counted.items()}
    # (as written: "Per-head W? No, shared." answers with its second sentence)
    said = _yes_no(written)
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
    guessed = frozenset(
        k
        for k, ms in counted.items()
        if status[k] is Status.RECOGNISED and ms and all(m.guessed for m in ms if m.supports)
    )
    cited = frozenset(
        k
        for k, ms in counted.items()
        if status[k] is Status.RECOGNISED and ms and all(m.cited for m in ms if m.supports)
    )
    apart = _apart(counted, status, claimed, sentences, stances)
    return Reading(
        status,
        tuple(m for m in rubric.misconceptions if m.id in wrong),
        frozenset(held),
        tuple(m for m in rubric.misconceptions if m.id in yielded),
        tuple(_excerpt(text, sentences, c.sentence, c.source) for c in copies),
        guessed,
        cited,
        apart,
    )


# words that tie a clause to the one before as its reason or consequence: "each head sees fewer
# tokens, so the attention is more local" says one (wrong) thing, not two
_LINKS = frozenset("so since because as hence therefore thus which meaning means".split())


def _apart(
    counted: dict[str, list[Match]],
    status: dict[str, Status],
    claimed: list[Match],
    sentences: list[Sentence],
    stances: list[Stances],
) -> frozenset[str]:
    """The recognised concepts stated in a clause of their own, apart from every clause that
    states a misconception and not its reason or consequence: in another sentence, or in a
    clause joined to the wrong one by "and", "but" or a comma ("more heads give more softmaxes,
    but each head sees fewer tokens")."""
    if not claimed:
        return frozenset()

    def clauses(m: Match) -> set[tuple[int, int]] | None:
        if m.sentence >= len(stances):  # matched across the whole answer: no clause of its own
            return None
        return {(m.sentence, stances[m.sentence].clause_start[i]) for i in m.positions}

    def linked(sentence: int, a: int, b: int) -> bool:
        words = [t.word for t in sentences[sentence].tokens]
        later = max(a, b)
        near = words[max(later - 2, 0) : later + 1]
        return a == b or any(w in _LINKS for w in near)

    wrong = [c for m in claimed if (c := clauses(m)) is not None]
    wrong_clauses = set().union(*wrong) if wrong else set()
    found = set()
    for k, ms in counted.items():
        if status[k] is not Status.RECOGNISED:
            continue
        for m in ms:
            mine = clauses(m) if m.supports else None
            if mine and not any(
                s == t and linked(s, a, b) for s, a in mine for t, b in wrong_clauses
            ):
                found.add(k)
    return frozenset(found)


def _excerpt(text: str, sentences: list[Sentence], index: int, source: str) -> tuple[str, str]:
    """The hand-out, and the first words of the answer's sentence that copies it, as written
    (the normalised tokens when a run-on sentence was read in pieces)."""
    raw = split_sentences(text)
    if len(raw) == len(sentences):
        words = raw[index].split()
    else:
        words = [t.word for t in sentences[index].tokens]
    excerpt = " ".join(words[:COPIED_EXCERPT_WORDS])
    return source, excerpt + (" ..." if len(words) > COPIED_EXCERPT_WORDS else "")
