"""Rubrics for the written answers: one TOML file per question in autograder/rubrics/.

A rubric lists the concepts a full answer contains. Each concept has a weight (``points``; the
question's total comes from points.toml), the phrasings that express it, and the ``opposites``:
claims whose negation expresses the concept and whose assertion contradicts it. The header of
autograder/rubrics/common.toml describes the format; that file also holds the phrase table and
synonym groups every rubric shares.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

from mha_check.questions import WRITTEN_QUESTIONS

from ..paths import RUBRICS
from .text import FILLERS, NEGATORS, Normaliser, Token, stem

CLAUSE_PUNCTUATION = frozenset(",;:")


class RubricError(ValueError):
    """A rubric file that cannot be used (the instructor's mistake, reported with its place)."""


@dataclass(frozen=True)
class Alternative:
    word: str
    stem: str
    canonical: bool
    # every word of the slot with this stem ("difference" and "different" are "differ"): a typo
    # is read as any of them
    forms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Phrasing:
    text: str  # as written in the rubric, for error messages and debugging
    slots: tuple[tuple[Alternative, ...], ...]  # one tuple of accepted words per slot, in order
    gap: int  # most non-filler tokens allowed between two consecutive slots
    # stems that make a match about something else when they sit inside it or just after it
    # (same clause): "same" is the count, "same shape" is not
    unless: frozenset[str] = frozenset()
    # matched over the whole answer, sentence and clause breaks ignored: a note or a bullet
    # list puts one fact per line ("1 head: 256" / "2 heads: 256")
    across: bool = False
    # matched only as a sentence of its own: "Shared." answers where Q, K and V come from, the
    # word "shared" inside another claim does not
    alone: bool = False

    @cached_property
    def stems(self) -> tuple[frozenset[str], ...]:
        """The stems each slot accepts (what matching compares)."""
        return tuple(frozenset(a.stem for a in slot) for slot in self.slots)

    @cached_property
    def negator_slots(self) -> frozenset[int]:
        """Slots that are themselves negations ("can not attend"): part of the claim."""
        return frozenset(
            i for i, alts in enumerate(self.slots) if all(a.word in NEGATORS for a in alts)
        )


@dataclass(frozen=True)
class Concept:
    id: str
    points: float  # weight within the question; 0 for a guard (a wrong claim to catch)
    idea: str  # names the idea when it is recognised, without giving it away
    hint: str  # what to think about when it is missing: never the answer itself
    phrasings: tuple[Phrasing, ...]
    opposites: tuple[Phrasing, ...]
    neutral: tuple[Phrasing, ...] = ()  # count for the concept whether affirmed or negated
    requires: tuple[str, ...] = ()  # counts only when these concepts are recognised too
    # recognised when every concept of one of these groups is: "no head has matrices of its
    # own" and "each head takes a slice of Q" together say where Q comes from
    implied_by: tuple[tuple[str, ...], ...] = ()
    # "no" or "yes": for a yes/no question, the bare answer word that states the concept when
    # nothing else in the answer speaks to it ("No. Heads slice the shared projections.")
    yes_no: str | None = None


@dataclass(frozen=True)
class Misconception:
    """A wrong idea stated in prose ("each head sees a different part of the sequence"). When an
    answer asserts it (not negated), the words it matched are read as that claim and nothing else,
    and the answer loses ``penalty`` of the question's points."""

    id: str
    penalty: float  # share of the question's points, 0-1
    idea: str  # names what to re-check, without giving the answer away
    # a misconception's ``unless`` words are given to each of its phrasings: "each token's
    # vector is split across the heads" is about features, not the sequence
    phrasings: tuple[Phrasing, ...]
    # a wrong reason for what is required: said as what would go wrong without it ("num_heads must
    # divide d_model, otherwise the GPU sits idle"), it is the student's reason all the same
    reason: bool = False


class Vocabulary(dict[str, frozenset[tuple[str, str]]]):
    """First letter -> (word, stem) the phrasings accept. ``typos`` keeps, for each answer word
    looked up, the stems it is a slip of (match.py): the same words recur in every answer."""

    def __init__(self, *args: object, **kwargs: object):
        super().__init__(*args, **kwargs)
        self.typos: dict[tuple[str, str], frozenset[str]] = {}


def vocabulary(phrasings: Iterable[Phrasing]) -> Vocabulary:
    """The words (other than notation) that phrasings accept, by first letter: the only words a
    typo in an answer can be read as."""
    by_letter: dict[str, set[tuple[str, str]]] = {}
    for phrasing in phrasings:
        for slot in phrasing.slots:
            for alt in slot:
                if not alt.canonical:
                    for word in dict.fromkeys((alt.word, *alt.forms)):
                        for letter in {word[:1], alt.stem[:1]}:
                            by_letter.setdefault(letter, set()).add((word, alt.stem))
    return Vocabulary({k: frozenset(v) for k, v in by_letter.items()})


@dataclass(frozen=True)
class Rubric:
    question: str
    concepts: tuple[Concept, ...]
    max_words: int  # longer answers are "far longer than needed": a teacher reads them
    normaliser: Normaliser = field(compare=False)
    misconceptions: tuple[Misconception, ...] = ()
    prompt: str = ""  # the question as students read it

    @cached_property
    def prompt_clauses(self) -> tuple[tuple[str, ...], ...]:
        """The question's clauses (split at , ; : and sentence ends) as word stems."""
        clauses: list[tuple[str, ...]] = []
        for sentence in self.normaliser.sentences(self.prompt):
            clause: list[str] = []
            for tok in (*sentence.tokens, Token(",", ",", True)):
                if tok.word in CLAUSE_PUNCTUATION:
                    if clause:
                        clauses.append(tuple(clause))
                    clause = []
                elif tok.word[0].isalnum():
                    clause.append(tok.stem)
        return tuple(clauses)

    @property
    def total_weight(self) -> float:
        return sum(c.points for c in self.concepts)

    def weight(self, concept_id: str) -> float:
        return next(c.points for c in self.concepts if c.id == concept_id)

    @cached_property
    def vocabulary(self) -> Vocabulary:
        """Every word the rubric's phrasings accept, by first letter."""
        phrasings = [p for c in self.concepts for p in (*c.phrasings, *c.opposites, *c.neutral)]
        phrasings += [p for m in self.misconceptions for p in m.phrasings]
        return vocabulary(phrasings)


class Synonyms(dict[str, frozenset[str]]):
    """word stem -> the words a phrasing's word also accepts; ``heads`` are the stems of the
    groups' head words."""

    heads: frozenset[str] = frozenset()


def _synonym_groups(raw: Mapping[str, list[str]]) -> Synonyms:
    """A group's head word accepts its group only; any other member accepts every group it
    belongs to (groups are symmetric)."""
    groups: dict[str, set[str]] = {}
    for head, others in raw.items():
        members = {head, *others}
        for word in members:
            groups.setdefault(stem(word), set()).update(members)
    for head, others in raw.items():
        groups[stem(head)] = {head, *others}
    found = Synonyms({k: frozenset(v) for k, v in groups.items()})
    found.heads = frozenset(stem(head) for head in raw)
    return found


def _alternative(token: Token) -> Alternative:
    return Alternative(token.word, token.stem, token.canonical)


def compile_phrasing(
    text: str,
    normaliser: Normaliser,
    synonyms: Synonyms,
    gap: int,
    where: str,
    unless: frozenset[str] = frozenset(),
    across: bool = False,
    alone: bool = False,
) -> Phrasing:
    slots: list[tuple[Alternative, ...]] = []
    for slot in text.split():
        alts: dict[str, Alternative] = {}
        for option in slot.split("|"):
            tokens = normaliser.tokens(option)
            if len(tokens) != 1:
                raise RubricError(
                    f"{where}: {option!r} in phrasing {text!r} is not one word; join a multi-word "
                    "expression in the [phrases] table and use its canonical token"
                )
            tok = tokens[0]
            # notation and phrase tokens are matched as written, but a phrase's canonical token
            # that heads a synonym group ("split" in q1) takes its group
            if tok.canonical and tok.stem not in synonyms.heads:
                words = {tok.word}
            else:
                words = {tok.word, *synonyms.get(tok.stem, ())}
            # the phrasing's own word first, then its synonyms in a fixed order: which word
            # stands for a stem must not depend on the order of a set (it did, with the hash seed)
            forms: dict[str, list[str]] = {}
            for word in [tok.word, *sorted(words - {tok.word})]:
                folded = normaliser.tokens(word)
                if len(folded) != 1:
                    raise RubricError(f"{where}: synonym {word!r} is not one word after [phrases]")
                alts.setdefault(folded[0].stem, _alternative(folded[0]))
                forms.setdefault(folded[0].stem, []).append(folded[0].word)
            for key, found in forms.items():
                a = alts[key]
                alts[key] = Alternative(a.word, a.stem, a.canonical, (*a.forms, *found))
        if all(a.word in FILLERS for a in alts.values()):
            continue  # "is the same" -> "same": fillers are skipped in answers too
        if all(a.word in NEGATORS for a in alts.values()):
            # a negation written into a phrasing is any negation: "not change" reads "No
            # change." and "It never changes." too
            alts = {stem(w): Alternative(w, stem(w), False) for w in sorted(NEGATORS)}
        slots.append(tuple(alts.values()))
    if not slots:
        raise RubricError(f"{where}: phrasing {text!r} has no words that can be matched")
    return Phrasing(text, tuple(slots), gap, unless, across, alone)


def _load_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RubricError(f"{path}: {exc}") from exc


def _stems(words: Iterable[str], normaliser: Normaliser) -> frozenset[str]:
    return frozenset(t.stem for w in words for t in normaliser.tokens(w))


PHRASING_KEYS = frozenset({"text", "gap", "unless", "across", "alone"})


def _compile_all(
    entries: list,
    normaliser: Normaliser,
    synonyms: Synonyms,
    gap: int,
    where: str,
    unless: frozenset[str] = frozenset(),
) -> tuple[Phrasing, ...]:
    """An entry is "words", or a table {text = "words", gap = 0, unless = ["shape"],
    across = true} for a phrasing that needs its own settings."""
    compiled = []
    for p in entries:
        if isinstance(p, str):
            compiled.append(compile_phrasing(p, normaliser, synonyms, gap, where, unless))
            continue
        if not isinstance(p, dict) or "text" not in p or set(p) - PHRASING_KEYS:
            raise RubricError(
                f"{where}: a phrasing is a string or a table with text and optionally gap, "
                f"unless, across, alone; not {p!r}"
            )
        compiled.append(
            compile_phrasing(
                p["text"],
                normaliser,
                synonyms,
                int(p.get("gap", gap)),
                where,
                unless | _stems(p.get("unless", []), normaliser),
                bool(p.get("across", False)),
                bool(p.get("alone", False)),
            )
        )
    return tuple(compiled)


def _yes_no(value: object, where: str) -> str | None:
    if value not in (None, "yes", "no"):
        raise RubricError(f'{where}: yes_no is "yes" or "no", not {value!r}')
    return value  # type: ignore[return-value]


def _misconceptions(
    entries: list, normaliser: Normaliser, synonyms: Synonyms, gap: int, where: str
) -> list[Misconception]:
    found = []
    for i, m in enumerate(entries):
        here = f"{where} misconception {m.get('id', i)!r}"
        if any(k not in m for k in ("id", "penalty", "idea", "phrasings")):
            raise RubricError(f"{here}: needs id, penalty, idea and phrasings")
        if not 0 <= float(m["penalty"]) <= 1:
            raise RubricError(f"{here}: penalty is a share of the question's points, 0 to 1")
        unless = _stems(m.get("unless", []), normaliser)
        phrasings = _compile_all(
            m["phrasings"], normaliser, synonyms, int(m.get("gap", gap)), here, unless
        )
        found.append(
            Misconception(
                m["id"], float(m["penalty"]), m["idea"], phrasings, bool(m.get("reason", False))
            )
        )
    return found


def load_rubric(path: Path, common: Mapping | None = None) -> Rubric:
    common = common or {}
    raw = _load_toml(path)
    phrases = {**common.get("phrases", {}), **raw.get("phrases", {})}
    normaliser = Normaliser(phrases)
    synonyms = _synonym_groups({**common.get("synonyms", {}), **raw.get("synonyms", {})})
    default_gap = int(raw.get("gap", common.get("gap", 3)))
    concepts = []
    for i, c in enumerate(raw.get("concept", [])):
        where = f"{path.name} concept {c.get('id', i)!r}"
        missing = [k for k in ("id", "points", "idea", "hint") if k not in c]
        if missing or not (c.get("phrasings") or c.get("opposites") or c.get("neutral")):
            raise RubricError(f"{where}: needs id, points, idea, hint and some phrasings")
        gap = int(c.get("gap", default_gap))

        def compile_all(key: str, c=c, gap=gap, where=where) -> tuple[Phrasing, ...]:
            return _compile_all(c.get(key, []), normaliser, synonyms, gap, where)

        concepts.append(
            Concept(
                id=c["id"],
                points=float(c["points"]),
                idea=c["idea"],
                hint=c["hint"],
                phrasings=compile_all("phrasings"),
                opposites=compile_all("opposites"),
                neutral=compile_all("neutral"),
                requires=tuple(c.get("requires", ())),
                implied_by=tuple(tuple(group) for group in c.get("implied_by", ())),
                yes_no=_yes_no(c.get("yes_no"), where),
            )
        )
    ids = [c.id for c in concepts]
    for c in concepts:
        unknown = [r for r in (*c.requires, *(i for g in c.implied_by for i in g)) if r not in ids]
        if unknown:
            raise RubricError(f"{path.name} concept {c.id!r}: names unknown concepts {unknown}")
    if not concepts or sum(c.points for c in concepts) <= 0:
        raise RubricError(f"{path.name}: no concept with points")
    # a shared misconception that this rubric's concepts already read as a contradiction
    # ("each head has its own Wq" in Q1) is charged once, as that contradiction
    reads = set(raw.get("reads", []))
    shared = common.get("misconception", [])
    unknown = reads - {m.get("id") for m in shared}
    if unknown:
        raise RubricError(f"{path.name}: reads unknown shared misconceptions {sorted(unknown)}")
    misconceptions = [
        # the shared ones accept the shared synonyms only: a question's wide groups
        # ("token" ~ "relationship" in the challenge) would make them claim right answers
        *_misconceptions(
            [m for m in shared if m.get("id") not in reads],
            normaliser,
            _synonym_groups(common.get("synonyms", {})),
            default_gap,
            "common.toml",
        ),
        *_misconceptions(
            raw.get("misconception", []), normaliser, synonyms, default_gap, path.name
        ),
    ]
    return Rubric(
        raw.get("question", path.stem),
        tuple(concepts),
        int(raw.get("max_words", 150)),
        normaliser,
        tuple(misconceptions),
        " ".join(str(raw.get("prompt", "")).split()),
    )


@cache
def load_rubrics(folder: Path = RUBRICS) -> dict[str, Rubric]:
    """Every written question's rubric, keyed by question id (cached: they are read once)."""
    common = _load_toml(folder / "common.toml") if (folder / "common.toml").exists() else {}
    rubrics = {}
    for qid in WRITTEN_QUESTIONS:
        path = folder / f"{qid}.toml"
        if not path.exists():
            raise RubricError(f"no rubric for {qid}: expected {path}")
        rubrics[qid] = load_rubric(path, common)
    return rubrics
