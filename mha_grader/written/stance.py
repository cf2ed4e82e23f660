"""Who claims what: the student's stance towards each clause of an answer.

Only what the student asserts is graded. A small grammar over the words of each sentence (no
parser, no model) cuts it into clauses and lets cue phrases set the stance of the words they
govern, in the manner of the NegEx/ConText family of algorithms (a cue, a direction, a scope
that ends at a clause or a contrast):

- **reported**: the idea is someone else's ("some claim", "a friend told me", "the team argues",
  "you might think", "it is often said that", "according to some", "I've read that", "I'm
  told", "people keep repeating that"): neither earned nor charged;
- **cited**: the course material's, as the student cites it ("according to the lab notebook",
  "the lecture slides say"): the student's claim, credited in part (grade.py), since the
  question asks what they found;
- **denied**: the student disowns it ("a myth says", "it is false that", "wrong to say",
  "ignore anyone who says", "I doubt that", "I don't think", "I never believed it", "a common
  mistake is to think", "nobody should believe", "Not true that", a sentence "That is false."
  after a claim, "..., which is false"): read as its negation, so a disowned right idea
  contradicts the concept and a disowned wrong one states the right idea;
- **supposed**: a condition ("if each head had its own matrices, ..."): it may earn (a condition
  on what works names what is needed) but never costs. A condition that is denied ("if not",
  "if d_model is not divisible by num_heads", "unless ...") states a requirement, and what it
  leads to is counterfactual, like what follows "otherwise" or "else": both read reversed, so
  "d_model must be divisible by num_heads, otherwise the features can't be cut equally" gives the
  constraint and its reason ("when" too, in a condition that denies: "raise a ValueError when
  d_model % num_heads != 0"). A consequence of a condition that is not denied is asserted,
  unless it is in the conditional mood ("..., then their patterns should differ", "the count
  would double") or requires ("if instead one set is shared, each head must get ...",
  "provided ..., d_model has to ..."): a prediction, supposed like its condition; a conclusion
  drawn after it ("..., so they must share one set") is asserted. A condition that the next
  clause denies ("If heads had their own matrices it would double, but they don't") is denied,
  and so is what it would lead to (supposed: it may earn, never costs); an answer that only
  supposes earns nothing (reading.py);
- **hedged**: "maybe", "I think", "probably", a statement ending in "?": still the student's
  claim (credited), noted as a guess;
- **asked**: a real question (it opens with an auxiliary or a wh-word): nothing is claimed, unless
  the next sentence answers it with a bare "No." or "Yes." (or a "no" in more words: "Of course
  not.", "Obviously not, why would they?"); a question without a verb ("Same pattern for the
  same token?") is judged by a reply without one ("Never in my runs.", "Not
  once.") as by "No.";
- **a contrast**: in "not X but Y" the negation is X's (match.py); "while it might seem that X",
  "it may look as if X" are how things might look, not the student's claim; "I used to think X,
  but now I see they don't" denies X; "it's not untrue that X" and "can't be anything but X"
  assert X; a bare answer word before a clause ("so no they're not the same") and a verbless note
  closed by one ("more heads more parameters no") are the reply, not a negation of the clause.

A negation's scope is its clause: clauses end at punctuation, at subordinators ("because",
"if", "otherwise"...), at an embedded question ("how many ...") and at an "and" that joins two
clauses with verbs of their own. Words of a cue ("I don't think", "if I'm not mistaken") are not
read as content or as negations. The cue phrases and word classes are in cues.py. No package on
PyPI fits better on this machine: spaCy, stanza and benepar parse only with a model downloaded at
run time, NLTK's taggers need data downloads, and the NegEx/ConText ports (negspacy, pyConTextNLP)
need spaCy or are unmaintained; this grammar is a few hundred lines and a millisecond a sheet.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from .cues import (
    ACCORDING,
    AUXILIARIES,
    BELIEVING,
    BETWEEN,
    CITED,
    CLAUSE_PUNCTUATION,
    CONCLUSIONS,
    CONTINUATIONS,
    CONTRARY,
    CONTRASTS,
    COURSE_SOURCES,
    EMBEDDED,
    ENDORSE_OPENING,
    ENDORSE_SENTENCE,
    ENDORSE_TAIL,
    FALSE_THAT,
    FRONTED_OPEN,
    GENERIC_SAY,
    HEARSAY,
    HEDGE,
    I_DENY,
    I_DOUBT,
    I_REPORTED,
    IGNORE,
    IN_WORDS,
    IRONY_CLOSER,
    IRONY_INLINE,
    IRONY_OPENING,
    IT_IS_SAID,
    MISTAKE_IS,
    NAMED_ANSWER,
    NECESSITY,
    NEG_OPENING,
    NEG_SENTENCE,
    NEG_TAIL,
    NEG_VERDICT,
    NO,
    NO_VOUCH,
    NOBODY,
    NOT_SO,
    NOT_SOMEONE,
    NOTHING_BUT,
    NOUN_DENY,
    NOUN_REPORT,
    NOW_SEE,
    ODDS,
    ODDS_SHARE,
    ODDS_SPLIT,
    OPEN_QUESTION,
    OPEN_VERDICT,
    OPENERS,
    OTHERS_SAY,
    OWN_EVIDENCE,
    OWN_FINDING,
    OWNERSHIP_REFUSED,
    POS_OPENING,
    POS_SENTENCE,
    POS_TAIL,
    POS_VERDICT,
    POST_MODIFIERS,
    PREPOSITIONS,
    PRONOUNS,
    QUOTATION,
    QUOTATION_ENDORSED,
    QUOTATION_MIN_WORDS,
    QUOTATION_OWN,
    QUOTATION_SOURCE,
    REPORT_TAIL,
    SARCASM,
    SAYING,
    SAYS_SOURCE,
    SCOPE_ENDS,
    SOURCE_LABEL,
    SOURCE_PRONOUNS,
    SOURCES,
    SUBJECTS,
    SUBORDINATORS,
    TF_LABEL,
    TRUE_THAT,
    UNDECIDED,
    VERBS,
    WH_OR_AUXILIARY,
    WITHDRAWN,
    WRONG_TO_SAY,
    YES,
)
from .text import FAILURES, FUNCTION_WORDS, NEGATORS, Sentence, stem


class Frame(Enum):
    """What the student does with a word's clause (for tests and debugging)."""

    ASSERTED = "asserted"
    HEDGED = "hedged"
    DENIED = "denied"
    SUPPOSED = "supposed"
    OTHERWISE = "otherwise"  # what would happen without what the student requires
    REPORTED = "reported"  # someone else's, or asked: not claimed either way
    CUE = "cue"  # a word of a stance cue, not content
    CITED = "cited"  # what the course material says, as the student cites it


@dataclass
class _Marks:
    """Per-token marks of one sentence, filled in by the cues."""

    n: int

    def __post_init__(self) -> None:
        self.reported = [False] * self.n
        self.flips = [0] * self.n
        self.hedged = [False] * self.n
        self.supposed = [False] * self.n
        self.otherwise = [False] * self.n
        self.cue = [False] * self.n
        self.cited = [False] * self.n  # credited as the course material's, not a finding
        # condition span -> its consequence span (both as ranges), for the grader's check of
        # what a condition supposes
        self.conditions: list[tuple[range, range]] = []
        self.breaks: set[int] = set()  # tokens that open a clause: after a cue, a condition


@dataclass(frozen=True)
class Stances:
    """The stance of every token of one sentence."""

    clause_start: tuple[int, ...]  # per token: where its clause begins
    reported: tuple[bool, ...]
    flips: tuple[int, ...]
    hedged: tuple[bool, ...]
    supposed: tuple[bool, ...]
    otherwise: tuple[bool, ...]  # what would happen without what the student requires
    cue: tuple[bool, ...]
    conditions: tuple[tuple[range, range], ...] = ()
    asks: bool = False  # a real question (or the question pasted), not answered after it
    # what the course material is cited for ("according to the notebook, ..."): the student's
    # claim, credited in part (empty: none)
    cited: tuple[bool, ...] = ()

    def frame(self, i: int) -> Frame:
        if self.cue[i]:
            return Frame.CUE
        if self.reported[i]:
            return Frame.REPORTED
        if self.otherwise[i]:
            return Frame.OTHERWISE
        if self.supposed[i]:
            return Frame.SUPPOSED
        if self.flips[i] % 2:
            return Frame.DENIED
        if self.cited and self.cited[i]:
            return Frame.CITED
        return Frame.HEDGED if self.hedged[i] else Frame.ASSERTED

    def claimed(self, positions: tuple[int, ...] | list[int]) -> bool:
        """The words are the student's own claim (or condition), not a report or a cue."""
        return not any(self.reported[i] or self.cue[i] for i in positions)


def plain(n: int) -> Stances:
    """Every token asserted, one clause (a run of tokens no cue reaches)."""
    return Stances(
        (0,) * n, (False,) * n, (0,) * n, (False,) * n, (False,) * n, (False,) * n, (False,) * n
    )


class _Text:
    """A sentence's words joined by spaces, to find cue phrases with regular expressions."""

    def __init__(self, words: list[str]):
        self.words = words
        self.starts: list[int] = []
        pos = 0
        for w in words:
            self.starts.append(pos)
            pos += len(w) + 1
        self.text = " ".join(words)

    def token_span(self, m: re.Match) -> range:
        """The tokens a match covers (whole tokens only)."""
        first = bisect_right(self.starts, m.start()) - 1
        if self.starts[first] < m.start():
            first += 1
        last = bisect_right(self.starts, max(m.end() - 1, m.start())) - 1
        return range(first, last + 1)


# ------------------------------------------------------------------------------ clauses
def _has_verb(words: list[str]) -> bool:
    return any(w in VERBS for w in words)


def clause_starts(words: list[str], breaks: set[int] = frozenset()) -> list[int]:
    """Per token, the index where its clause begins. A clause ends at punctuation, before a
    subordinator, and before an "and"/"or" that joins two clauses with verbs of their own (the
    word after it opening a subject, not a verb: "... can not be cut and d_head would not be
    whole" is two clauses, "does not add parameters and change shapes" one)."""
    starts = [0] * len(words)
    start = 0
    for i, w in enumerate(words):
        if w in CLAUSE_PUNCTUATION:
            start = i + 1
        elif i in breaks:
            start = i
        elif (w in SUBORDINATORS or w in EMBEDDED) and i > start:
            start = i
        elif w in ("and", "or") and i > start and i + 1 < len(words):
            nxt = words[i + 1]
            right = []
            for v in words[i + 1 : i + 8]:
                if v in CLAUSE_PUNCTUATION or v in SUBORDINATORS:
                    break
                right.append(v)
            if (
                nxt not in VERBS
                and nxt not in NEGATORS
                and _has_verb(words[start:i])
                and _has_verb(right)
            ):
                start = i
        starts[i] = start
    return starts


def _scope_forward(
    words: list[str], begin: int, conclusion_ends: bool = False, clause_ends: bool = False
) -> range:
    """From ``begin`` to the end of what a cue governs: the sentence's end, a colon or
    semicolon (but "; which ..." goes on), or a contrast ("but", "however"). What would happen
    without the constraint also ends at a conclusion drawn from it ("..., so it has to divide
    it"); what someone else says, at a comma that opens a clause of the student's own ("it's
    wrong to think any number works, d_model has to be divisible by it")."""
    for i in range(begin, len(words)):
        w = words[i]
        if (w in CONTRASTS and not _instead_of(words, i)) or (
            w in SCOPE_ENDS and words[i + 1 : i + 2] != ["which"]
        ):
            return range(begin, i)
        if conclusion_ends and w in CONCLUSIONS and NECESSITY & set(words[i + 1 : i + 7]):
            return range(begin, i)
        if (
            clause_ends
            and w == ","
            and not _list_comma(words, i)
            and _opens_clause(words, i + 1)
            and _has_verb(words[begin:i])
        ):
            return range(begin, i)
        # "it's not that X, and it doesn't Y": a pronoun after ", and" is a subject of the
        # student's own, its clause theirs (not "..., and that Y", which goes on)
        if (
            clause_ends
            and w == ","
            and words[i + 1 : i + 2] == ["and"]
            and words[i + 2 : i + 3] in (["it"], ["they"], ["we"], ["i"], ["there"])
            and _opens_clause(words, i + 2)
            and _has_verb(words[begin:i])
        ):
            return range(begin, i)
    return range(begin, len(words))


def _instead_of(words: list[str], at: int) -> bool:
    """ "over d_model/h dims instead of d_model": a phrase inside the clause, no contrast
    between two."""
    return words[at] == "instead" and words[at + 1 : at + 2] == ["of"]


def _list_comma(words: list[str], at: int) -> bool:
    """The comma at ``at`` separates the items of a list ("one Wq, Wk and Wv", "Q, K, V"): one
    word, then "and", "or" or the next comma."""
    return words[at + 2 : at + 3] in (["and"], ["or"], [","])


def _opens_clause(words: list[str], at: int) -> bool:
    """A clause with a verb of its own starts at ``at`` (not "256 for both", not "since ...")."""
    if at >= len(words) or words[at] in CONTINUATIONS:
        return False
    part = []
    for w in words[at:]:
        if w in CLAUSE_PUNCTUATION:
            break
        part.append(w)
    return _has_verb(part)


def _scope_back(words: list[str], end: int) -> range:
    """From the start of the statement (after the last colon or semicolon, or a contrast)
    up to ``end``."""
    for i in range(end - 1, -1, -1):
        if words[i] in SCOPE_ENDS or (words[i] in CONTRASTS and not _instead_of(words, i)):
            return range(i + 1, end)
    return range(0, end)


# --------------------------------------------------------------------------- conditions
def _condition_end(words: list[str], begin: int) -> int:
    """Where a condition that starts at ``begin`` (after "if"/"unless") ends: punctuation,
    "then", a subordinator, or a new subject after the condition's verb ("if num_heads does not
    divide d_model the split fails")."""
    seen_verb = False
    for i in range(begin, len(words)):
        w = words[i]
        if w in CLAUSE_PUNCTUATION or w == "then" or (w in SUBORDINATORS and i > begin):
            return i
        if (
            seen_verb
            and w in SUBJECTS
            and i > begin
            and (words[i - 1] not in VERBS or _predicate_follows(words, i + 1))
            and words[i - 1] not in PREPOSITIONS
            and words[i - 1] not in ("and", "or", "not")
        ):
            return i
        seen_verb = seen_verb or w in VERBS or w == "not"
    return len(words)


def _predicate_follows(words: list[str], at: int) -> bool:
    """A noun of one or two words at ``at`` and then a predicate of its own: after "if it does
    not divide", "the reshape fails" is a clause, not what "divide" divides ("if heads share the
    weights, ..." is one)."""
    for j in range(at + 1, min(at + 3, len(words))):
        if words[j] in CLAUSE_PUNCTUATION:
            return False
        if words[j] in AUXILIARIES or words[j] in FAILURES:
            return True
    return False


def _said(word: str) -> bool:
    """A lexical verb ("said", "showed", "thought", "behaved"), not an auxiliary ("would")."""
    return word not in AUXILIARIES and (word in VERBS or word in _SHOWED or _stem_in(word, SAYING))


_SHOWED = frozenset(
    """showed shown proved proven indicated suggested behaved acted turned turns suggests
    indicates proves argued told""".split()
)


_HYPOTHETICAL = frozenset("would could might wouldn couldn".split())


def _hypothetical_after(words: list[str], at: int) -> bool:
    """A colon at ``at`` opens a clause in the conditional mood ("...: d_head would not be")."""
    if at >= len(words) or words[at] != ":":
        return False
    for w in words[at + 1 :]:
        if w in (":", ";"):
            return False
        if w in _HYPOTHETICAL:
            return True
    return False


def _hypothetical_colon(words: list[str], at: int, marks: _Marks) -> bool:
    """A colon at ``at``, after a prediction, opens its spelling-out: a clause in which the
    student does not speak ("I", "my run") and no cue of its own stands."""
    if at >= len(words) or words[at] != ":":
        return False
    after = _scope_forward(words, at + 1)
    return bool(after) and not (
        _FIRST_PERSON & {words[j] for j in after} or any(marks.cue[j] for j in after)
    )


# "with any other head count", "for a different d_model", "with another split": the case other
# than the one the student requires (the phrase's words, after "with"/"for")
# the case without what was just said, in words: "were this not the case", "if that were not so"
_NOT_THE_CASE = tuple(
    tuple(f"{opening} {this} {verb} not {case}".split())
    for opening, verb in (("were", ""), ("if", "were"), ("if", "was"), ("if", "is"))
    for this in ("this", "that", "it")
    for case in ("the case", "so", "true")
) + (("failing", "that"), ("failing", "this"))
_OTHER_CASE = (["any", "other"], ["another"], ["a", "different"], ["any", "different"])
# the same phrases by their first word, in order: most words open none, and are passed at once
_NOT_THE_CASE_BY_FIRST: dict[str, list[list[str]]] = {}
for _phrase in _NOT_THE_CASE:
    _NOT_THE_CASE_BY_FIRST.setdefault(_phrase[0], []).append(list(_phrase))
# the words after which a word opens a clause (a condition's "if", an "otherwise")
_BEFORE_OPENING = CLAUSE_PUNCTUATION | SUBORDINATORS | OPENERS | {"or"}


def _other_case(words: list[str], at: int) -> int:
    """The length of an "other case" phrase at ``at`` ("with any other", "for another"), 0 if
    none opens there."""
    if words[at] not in ("with", "for"):
        return 0
    for phrase in _OTHER_CASE:
        if words[at + 1 : at + 1 + len(phrase)] == phrase:
            return 1 + len(phrase)
    return 0


_MUST = frozenset("must should required necessary".split())
_HAS_TO = frozenset("has have need needs".split())


def _requirement(words: list[str], start: int) -> bool:
    """Whether the clause that starts at ``start`` states a requirement ("num_heads must divide
    d_model", "they have to be equal"), up to the next clause punctuation."""
    end = next((j for j in range(start, len(words)) if words[j] in CLAUSE_PUNCTUATION), len(words))
    return any(
        w in _MUST or (w in _HAS_TO and words[j + 1 : j + 2] == ["to"])
        for j, w in enumerate(words[start:end], start)
    )


def _mark_conditions(words: list[str], marks: _Marks) -> None:
    i = 0
    while i < len(words):
        w = words[i]
        opens = i == 0 or words[i - 1] in _BEFORE_OPENING
        # "d_model has to be divisible by num_heads or the heads won't get equal chunks": "or"
        # after a requirement, opening a clause of its own, means "otherwise"
        required = w == "or" and words[i + 1 : i + 2] != ["else"] and _opens_clause(words, i + 1)
        # (", or the heads ...": the requirement is the clause before the comma)
        before = i - 1 - (i > 1 and words[i - 1] == ",")
        required = required and bool(NECESSITY & set(words[clause_starts(words)[before] : i]))
        # "d_model must be divisible by num_heads, or num_heads must divide d_model": an "or"
        # that opens a requirement of its own offers another one beside it (each alternative
        # said), not what would happen otherwise
        required = required and not _requirement(words, i + 1)
        if w == "otherwise" and i > 0 and _said(words[i - 1]) and not marks.cue[i]:
            # "my check said otherwise", "head 1 behaved otherwise": an adverb (differently) of
            # the verb before it, not what would happen without a requirement
            marks.cue[i] = True
            i += 1
            continue
        if (w == "otherwise" or (w == "else" and opens) or required) and not marks.cue[i]:
            # "otherwise X": what would happen without what was just said, so not X; "the heads
            # would otherwise get unequal shares": the whole clause
            marks.cue[i] = True
            if i > 0 and words[i - 1] == "or":
                marks.cue[i - 1] = True
            begin = i + 1 if opens else clause_starts(words)[i]
            scope = _scope_forward(words, begin, conclusion_ends=True)
            if any(
                condition.stop <= i
                and not marks.flips[condition.start]
                and not _PAST_MOOD & {words[j] for j in condition}
                for condition, _ in marks.conditions
            ):
                # "if P, then Q; otherwise R": the other branch of an open supposition the
                # student does not make, supposed like it ("if the heads learn different
                # patterns, one head would lose that; otherwise nothing is lost" takes no side);
                # after a condition contrary to fact ("if the heads had their own matrices, the
                # count would grow; otherwise it stays"), R is what is the case
                for j in scope:
                    marks.supposed[j] = not marks.cue[j]
                i += 1
                continue
            for j in scope:
                marks.otherwise[j] = not marks.cue[j]
            # "Otherwise the reshape cannot work: d_head would not be a whole number": what the
            # colon spells out in the conditional mood is what would happen too
            while _hypothetical_after(words, scope.stop):
                scope = _scope_forward(words, scope.stop + 1, conclusion_ends=True)
                for j in scope:
                    marks.otherwise[j] = not marks.cue[j]
            i += 1
            continue
        if (
            w == "without"
            and opens
            and words[i + 1 : i + 2] in (["that"], ["this"], ["it"], ["them"])
            and words[i + 2 : i + 3] == [","]
        ):
            # "Without that, d_head is not an integer": what would happen otherwise
            marks.cue[i] = marks.cue[i + 1] = True
            for j in _scope_forward(words, i + 3, conclusion_ends=True):
                marks.otherwise[j] = not marks.cue[j]
            i += 3
            continue
        phrase = next(
            (p for p in _NOT_THE_CASE_BY_FIRST.get(w, ()) if words[i : i + len(p)] == p), None
        )
        if opens and phrase and words[i + len(phrase) : i + len(phrase) + 1] == [","]:
            # "Were this not the case, the chunks would be unequal", "If that were not so, ...":
            # the case without what was just said, as "otherwise" is
            for j in range(i, i + len(phrase)):
                marks.cue[j] = True
            for j in _scope_forward(words, i + len(phrase) + 1, conclusion_ends=True):
                marks.otherwise[j] = not marks.cue[j]
            i += len(phrase) + 1
            continue
        other = _other_case(words, i)
        if opens and other and not marks.cue[i] and NECESSITY & set(words[:i]):
            # "d_model must be divisible by num_heads, whereas with any other head count the
            # chunks would be unequal": the other case of what the student requires, and what
            # would happen in it, is what would happen otherwise (not after a finding: "they
            # differ; with any other seed they would differ too" stays the student's claim)
            scope = _scope_forward(words, i + other, conclusion_ends=True)
            if _HYPOTHETICAL & {words[j] for j in scope}:
                for j in range(i, i + other):
                    marks.cue[j] = True
                for j in scope:
                    marks.otherwise[j] = not marks.cue[j]
                i = scope.stop
                continue
        # "Provided each head ran its own softmax, the count would go up": a supposition like
        # "if", when what follows is what it would lead to; "provided that d_model divides,
        # each head gets an equal chunk" only sets a scope, and stays the student's claim
        supposing = w in _SUPPOSING and opens
        if (w not in ("if", "unless", "when", "whenever") and not supposing) or marks.cue[i]:
            i += 1
            continue
        before = words[i - 1] if i else ""
        if before in ("even", "as", "only", "what") or words[i + 1 : i + 2] in (["so"], ["any"]):
            i += 1  # "even if", "only if" (a requirement), "as if", "if so", "if any"
            continue
        end = i + 2 if words[i + 1 : i + 2] == ["not"] else _condition_end(words, i + 1)
        condition = range(i + 1, end)
        # "if it is not divisible", "if that fails": a condition that denies
        negations = sum(
            1 for j in condition if words[j] in NEGATORS | FAILURES and not marks.cue[j]
        )
        denied = (negations + (w == "unless")) % 2 == 1
        if w in ("when", "whenever") and not denied:
            # "when I ran it, ...": a time, not a supposition; but "raise a ValueError when
            # d_model % num_heads != 0" is a condition that denies, like "if"
            i += 1
            continue
        w = "if" if w != "unless" else w
        at_start = i == 0 or words[i - 1] in CLAUSE_PUNCTUATION | OPENERS | SUBORDINATORS
        if at_start:
            # (", they would ..." is read "; they would ...": a new subject, still the consequence)
            begin = end + (end < len(words) and words[end] in (",", ";", "then"))
            consequence = _scope_forward(words, begin, conclusion_ends=denied)
        else:
            consequence = _scope_back(words, i)
        if supposing and not _predicts(words, consequence):
            i += 1
            continue
        marks.cue[i] = True
        if condition and words[condition[0]] == "not" and len(condition) == 1:
            marks.cue[condition[0]] = True  # "if not, ..." is the whole condition
        marks.breaks.add(end)
        if end < len(words) and words[end] == "then":
            marks.cue[end] = True
        if denied:
            # "if X is not divisible ..., the split fails": X must be divisible, and the split
            # works (the counterfactual read reversed); "unless X, ..." the same
            for j in condition:
                marks.flips[j] += w == "if"
            for j in consequence:
                marks.otherwise[j] = not marks.cue[j]
        else:
            for j in condition:
                marks.supposed[j] = True
            # (up to a conclusion the student draws: "..., so they must share one set")
            drawn = next((j for j in consequence if words[j] in CONCLUSIONS), consequence.stop)
            if _HYPOTHETICAL & {words[j] for j in range(drawn, consequence.stop)}:
                # "..., so the heads would differ": a conclusion in the conditional mood is still
                # what the supposition would lead to
                drawn = consequence.stop
            predicted = range(consequence.start, drawn)
            if _predicts(words, predicted) or _trusts_source(words, condition):
                # "if heads look at different slices, their patterns should differ": what the
                # supposition would lead to, a prediction, not a finding
                for j in predicted:
                    marks.supposed[j] = not marks.cue[j]
                # "if one trusted the notes, the reply would be that X: Y": what the colon
                # spells out is the prediction's content, supposed too (not when the student
                # speaks in it, "...: I saw otherwise", or a cue of its own governs it)
                if drawn == consequence.stop and _hypothetical_colon(words, drawn, marks):
                    after = _scope_forward(words, drawn + 1)
                    for j in after:
                        marks.supposed[j] = True
                    consequence = range(consequence.start, after.stop)
            marks.conditions.append((condition, consequence))
        i = end if end > i else i + 1


# words that open a supposition as "if" does ("provided that ...", "providing ...")
_SUPPOSING = frozenset("provided providing assuming supposing".split())
# a condition contrary to fact: "if each head had its own matrices", "if there were ..."
_PAST_MOOD = frozenset("had were was did could would might".split())
# the modals of what a supposition leads to ("..., then they should differ", "it would double")
_EXPECTED = frozenset("should would ought shouldn wouldn".split())
# what a supposition requires ("if instead there is one shared set, the heads must get equal
# slices", "provided each head gets an equal chunk, d_model has to be divisible"): a requirement
# drawn from the supposition, which holds only if it does, so supposed like a prediction
_REQUIRED = frozenset("must mustn".split())
_REQUIRED_TO = frozenset("has have need needs".split())


# a condition that a source is right: "if the module is right, ...", "if the slides are to be
# believed, ...", "if we trust the notes, ..." (not the student's own: "if I'm right" hedges,
# "if my count is right" rests on their own result)
_TRUSTED = re.compile(
    r"^(?!(?:i|we|it|this|that|so) )(?:[a-z_]+ ){1,5}(?:is|are|was|were|s) "
    r"(?:(?:really|actually|indeed) )?(?:right|correct|accurate|true|trustworthy|reliable|"
    r"to be (?:believed|trusted))$"
    r"|^(?:we|you|one) (?:(?:really|can|do) )?(?:trust|trusts|believe|believes|take|takes) "
    r"(?:the|my|our|your|his|her|their|what|whoever) (?:[a-z_]+ ){0,4}?(?:[a-z_]+)"
    r"(?: at (?:its|their|his|her) word)?$"
)


def _trusts_source(words: list[str], condition: range) -> bool:
    """Whether the condition is that someone else's account is right: what follows it is then
    theirs, supposed, even in the indicative ("if the module is right, more heads give ...")."""
    said = [words[j] for j in condition]
    head = [w for w in said[1:3] if w != "own"][:1]
    if said[:1] in (["my"], ["our"]) and head and _stem_in(head[0], OWN_EVIDENCE):
        return False  # "if my count is right": the student's own result
    return bool(said) and bool(_TRUSTED.match(" ".join(said)))


def _predicts(words: list[str], span: range) -> bool:
    """Whether ``span`` (what a supposition leads to) is in the conditional mood or requires."""
    return any(
        words[j] in _EXPECTED
        or words[j] in _REQUIRED
        or (words[j] in _REQUIRED_TO and words[j + 1 : j + 2] == ["to"])
        for j in span
    )


# ----------------------------------------------------------------------------- the cues
def _mark_forward(text: _Text, pattern: re.Pattern, marks: _Marks, how: str) -> None:
    spans = [text.token_span(m) for m in pattern.finditer(text.text)]
    # a cue's scope ends where the next one of its kind begins: "it's not about X, and it's not
    # about Y" denies X and Y once each (the first scope running on would deny Y twice)
    for k, span in enumerate(spans):
        later = spans[k + 1].start if k + 1 < len(spans) else None
        _mark_span(text, span, marks, how, later)


def _take(marks: _Marks, span: range) -> bool:
    """Make ``span``'s words a cue, unless one of them is part of another cue already (the
    earlier reading wins); whether it did."""
    if any(marks.cue[i] for i in span):
        return False
    for i in span:
        marks.cue[i] = True
    return True


def _mark_span(text: _Text, span: range, marks: _Marks, how: str, limit: int | None = None) -> None:
    """A cue's words, and what it governs: what follows it in its statement (up to ``limit``,
    where another cue begins), or (a cue that closes the statement) what came before it."""
    if not span or not _take(marks, span):
        return
    marks.breaks.add(span.stop)
    scope = _scope_forward(text.words, span.stop, clause_ends=how in ("report", "deny"))
    # another stance cue ("I doubt X, I think Y") opens a scope of its own
    stop = next((i for i in scope if marks.cue[i] or i == limit), scope.stop)
    scope = range(scope.start, stop)
    if not scope:  # "..., some say.": the cue closes the statement, it reports what came before
        scope = _scope_back(text.words, span.start)
    _apply(marks, scope, how)


def _apply(marks: _Marks, scope: range, how: str) -> None:
    for i in scope:
        if marks.cue[i]:
            continue
        if how == "report":
            marks.reported[i] = True
        elif how == "deny":
            marks.flips[i] += 1
        elif how == "disown":
            # a verdict on a sentence before: what it reports or asserts is denied; what it
            # already denies ("a myth says X. I never believed it.") stays denied
            if marks.reported[i] or marks.flips[i] % 2 == 0:
                marks.flips[i] += 1
            marks.reported[i] = False
        elif how == "endorse":
            marks.reported[i] = False
        elif how == "own":  # endorsed by the student's own finding: no longer a citation either
            marks.reported[i] = False
            marks.cited[i] = False
        elif how == "hedge":
            marks.hedged[i] = True
        elif how == "cite":
            marks.cited[i] = True


def _mark_tail(text: _Text, marks: _Marks) -> None:
    for pattern, how in ((NEG_TAIL, "disown"), (POS_TAIL, "endorse"), (REPORT_TAIL, "report")):
        for m in pattern.finditer(text.text):
            span = text.token_span(m)
            if _take(marks, span):
                _apply(marks, _scope_back(text.words, span.start), how)


# ------------------------------------------------------------------- attribution as grammar
# "ignore anyone who says X" is a denial (IGNORE in cues.py), not a report
_DISMISS = frozenset("ignore disregard dismiss forget trust listen doubt".split())
_BELIEF_NOUNS = frozenset(
    "view opinion take theory belief claim position argument answer explanation conclusion".split()
)
_RAISING = frozenset("seem seems seemed tend tends tended like likes love loves used".split())
_TEMPTING = frozenset("tempting easy natural intuitive reasonable obvious logical".split())
_DETERMINERS = [[w] for w in "the a an my our your his her their this that some".split()]
_OPENS_SUBJECT = CLAUSE_PUNCTUATION | OPENERS | SUBORDINATORS | frozenset("that and or".split())


def _stem_in(word: str, words: frozenset[str]) -> bool:
    return word in words or stem(word) in _stems(words)


_STEMS: dict[frozenset[str], frozenset[str]] = {}


def _stems(words: frozenset[str]) -> frozenset[str]:
    if words not in _STEMS:
        _STEMS[words] = frozenset(stem(w) for w in words)
    return _STEMS[words]


# the writer naming themself in the third person ("The student believes ...")
_SELF = [[d, w] for d in ("the", "this") for w in ("student", "candidate", "writer", "undersigned")]


def _subject(words: list[str], end: int, anyone: bool = False) -> tuple[int, bool] | None:
    """Where the subject that ends at ``end`` (exclusive) begins, and whether it names the
    course's material, when it names a person, a group or a source other than the student
    ("a classmate", "folks online", "the guy next to me in lab", "my notes from lecture",
    "my cousin, who works in ML,"): its head, with words before it back to the clause's start
    and a post-modifier after it. None when it is no such subject."""
    k = end
    # a parenthetical ", who works in ML ," between the subject and its verb
    if k > 0 and words[k - 1] == ",":
        opening = next((i for i in range(k - 2, max(k - 10, -1), -1) if words[i] == ","), None)
        if opening is None or words[opening + 1 : opening + 2] not in (["who"], ["which"]):
            return None
        k = opening
    for head in range(k - 1, max(k - 8, -1), -1):
        w = words[head]
        if w in CLAUSE_PUNCTUATION or w in SUBORDINATORS:
            return None
        # (not "both modules", torch's nn.MultiheadAttention objects)
        course = _stem_in(w, COURSE_SOURCES) and w != "modules"
        # after a verb of belief, any noun not the student's nor their evidence ("my housemate")
        someone = (
            anyone
            and w.isalpha()
            and w not in VERBS
            and w not in PREPOSITIONS
            and w not in NOT_SOMEONE
            and w not in SUBJECTS
            and not _stem_in(w, OWN_EVIDENCE)
        )
        if not (course or someone or _stem_in(w, SOURCES) or w in SOURCE_PRONOUNS):
            # a verb ends the subject, unless a determiner makes it a noun ("of the change")
            if w in VERBS and w not in BETWEEN and words[head - 1 : head] not in _DETERMINERS:
                return None
            continue
        # what follows the head up to the verb is its post-modifier ("next to me in lab")
        # (or the person's name after it: "my classmate Lena says", "our TA Marco claims")
        named = head + 2 == k and _stem_in(w, SOURCES) and _name_like(words[head + 1])
        if (
            head + 1 < k
            and words[head + 1] not in POST_MODIFIERS
            and words[head + 1] != "next"
            and not named
        ):
            continue
        start = head
        if w not in SOURCE_PRONOUNS:
            while (
                start > 0
                and head - start < 3
                and words[start - 1] not in _OPENS_SUBJECT
                and words[start - 1] not in VERBS
                and words[start - 1] not in PREPOSITIONS
                and words[start - 1] not in _DISMISS
                and not _stem_in(words[start - 1], SAYING)
            ):
                start -= 1
        opens_as = start == 1 or start > 1 and words[start - 2] in _OPENS_SUBJECT
        if start > 0 and words[start - 1] not in _OPENS_SUBJECT:
            if not (words[start - 1] in _AS and opens_as):  # "As my TA said, X"
                continue  # "on Reddit" in "some guy on Reddit reckons": the head is further back
        if {"i", "we", "me", "us"} & set(words[start:head]):
            return None
        return start, course
    return None


def _attribute(text: _Text, marks: _Marks) -> None:
    """Ideas credited to someone else, recognised by their grammar rather than a list of
    phrases: a subject naming people or a source, then a verb of saying or believing ("a
    classmate swears", "folks online reckon", "my notes from lecture say"), "according to" any
    source, or hearsay ("supposedly", "rumour has it", "word around the lab is"). The course's
    material as the source is cited; anyone else's words are reported."""
    words = text.words
    _mark_forward(text, HEARSAY, marks, "report")
    for j, w in enumerate(words):
        if marks.cue[j]:
            continue
        if w in _BELIEF_NOUNS and words[j + 1 : j + 3] in (["is", "that"], ["was", "that"]) and j:
            # "my friend's view is that X", "the TA's take was X"
            found = _subject(words, j, anyone=True)
            if found is not None:
                stop = j + 3
                _mark_span(text, range(found[0], stop), marks, "cite" if found[1] else "report")
            continue
        if w == "per" and j + 1 < len(words) and (j == 0 or words[j - 1] in _OPENS_SUBJECT):
            # "per the slides, X": the course cited (a person: reported)
            comma = next((i for i in range(j + 1, min(j + 6, len(words))) if words[i] == ","), None)
            source = words[j + 1 : comma] if comma is not None else []
            if source and any(_stem_in(v, COURSE_SOURCES) for v in source):
                _mark_span(text, range(j, comma + 1), marks, "cite")
            elif source and any(_stem_in(v, SOURCES) for v in source):
                _mark_span(text, range(j, comma + 1), marks, "report")
            continue
        if w == "according" and words[j + 1 : j + 2] == ["to"]:
            near = range(j + 2, min(j + 11, len(words)))
            comma = next((i for i in near if words[i] == ","), None)
            source = words[j + 2 : comma if comma is not None else j + 5]
            if not source or OWN_EVIDENCE & set(source) and {"my", "our"} & set(source):
                continue
            course = any(_stem_in(v, COURSE_SOURCES) for v in source)
            stop = comma + 1 if comma is not None else j + 2 + len(source)
            _mark_span(text, range(j, stop), marks, "cite" if course else "report")
            continue
        pointed = w in ("point", "points", "pointed") and words[j + 1 : j + 2] == ["out"]
        if not (pointed or _stem_in(w, SAYING)):
            continue
        if j > 1 and words[j - 1] == "to" and words[j - 2] in _TEMPTING:
            # "it's tempting to think X", "easy to assume X": an idea one might have, not a claim
            start = j - 2 - (words[j - 3 : j - 2] in (["is"], ["s"], ["was"]))
            start -= start > 0 and words[start - 1] in ("it", "seems", "sounds")
            stop = j + 1 + (words[j + 1 : j + 2] == ["that"])
            _mark_span(text, range(start, stop), marks, "report")
            continue
        if j > 1 and words[j - 1] == "to" and words[j - 2] not in _RAISING:
            continue  # "wrong to think", "hard to believe": no subject of its own
        if j > 2 and words[j - 3 : j - 1] == ["would", "have"]:
            continue  # "the notes would have you believe X": a report (NOUN_REPORT), not a cite
        if w.endswith("ing") and words[j - 1 : j] in (["is"], ["was"], ["s"], ["are"]):
            continue  # "the classic trap is believing X": a predicate, not what someone says
        end = j
        while end > 0 and words[end - 1] in BETWEEN:
            end -= 1
        found = _subject(words, end, anyone=_stem_in(w, BELIEVING)) or _named(words, end)
        if found is None:
            continue
        start, course = found
        if end == j and words[start:end] in _SELF and _stem_in(w, BELIEVING):
            continue  # "the student believes X": the writer's own belief, a hedge ("was told": no)
        stop = j + 1 + pointed
        while stop < len(words) and words[stop] in ("me", "us", "you", "him", "her", "them"):
            stop += 1
        if _as_said(text, marks, start, stop, course):
            continue
        if words[stop : stop + 1] == ["that"]:
            stop += 1
        _mark_span(text, range(start, stop), marks, "cite" if course else "report")


# a bare word that opens a clause before a verb of saying and is no person's name: a tool, the
# student's reasoning, a thing ("np.allclose said False", "intuition says they differ")
_NOT_NAMES = frozenset(
    """np numpy torch pytorch python allclose assert pytest mha code it nothing everything
    something logic intuition theory experience reason reasoning parity equality softmax
    attention math maths common sense whoever whatever whichever mine ours""".split()
)


def _named(words: list[str], end: int) -> tuple[int, bool] | None:
    """A person named as the subject of a verb of saying ("Priya said X", "so Ben claims X"):
    a bare word that opens its clause (no determiner, one word) and names nothing of the
    student's, the course's or the layer's. (A verb of belief takes any such subject already.)"""
    at = end - 1
    if at < 0 or (at > 0 and words[at - 1] not in _OPENS_SUBJECT):
        return None
    return (at, False) if _name_like(words[at]) else None


def _name_like(w: str) -> bool:
    """Whether a bare word could be a person's name: none of the student's, the course's or
    the layer's words, nor a verb or a function word."""
    return not (
        not w.isalpha()
        or w in _NOT_NAMES
        or w in VERBS
        or w in PREPOSITIONS
        or w in NOT_SOMEONE
        or w in SUBJECTS
        or w in FUNCTION_WORDS
        or w in PRONOUNS
        or _stem_in(w, OWN_EVIDENCE)
        or _stem_in(w, COURSE_SOURCES)
    )


_AS = ("as", "like")


def _as_said(text: _Text, marks: _Marks, start: int, stop: int, course: bool) -> bool:
    """ "As my TA said, X" / "Like the professor said in lecture, X": the student states X and
    agrees with its source (the course material as the source is cited). True when the source
    opens the sentence that way; its words up to the comma are the cue."""
    words = text.words
    at = start if words[start] in _AS else start - 1
    if at < 0 or words[at] not in _AS or (at and words[at - 1] not in _OPENS_SUBJECT):
        return False
    comma = next((i for i in range(stop, min(stop + 6, len(words))) if words[i] == ","), None)
    if comma is None:
        return False
    if not _take(marks, range(at, comma + 1)):
        return False
    marks.breaks.add(comma + 1)
    if course:
        _apply(marks, _scope_forward(words, comma + 1, clause_ends=False), "cite")
    return True


def _endorse(text: _Text, marks: _Marks) -> None:
    """ "..., and she was right", "which is true", "and I agree with her": what the sentence
    reported before is the student's own claim."""
    for m in ENDORSE_TAIL.finditer(text.text):
        span = text.token_span(m)
        scope = _scope_back(text.words, span.start)
        # (its "I think" may already be read as a hedge)
        cited = any(marks.cited[i] for i in scope)
        if not any(marks.reported[i] for i in scope) and not cited:
            continue
        # the course material agreed with ("which is true") stays cited; the student's own
        # finding agreeing with it ("which is what I got") makes it theirs
        own = OWN_FINDING.search(m.group())
        if cited and not own:
            continue
        for i in span:
            marks.cue[i] = True
        _apply(marks, scope, "own" if own else "endorse")


def _mark_put_in(text: _Text, marks: _Marks) -> None:
    """ "X, says my TA, because Y": a report put inside the statement reports all of it."""
    for m in SAYS_SOURCE.finditer(text.text):
        span = text.token_span(m)
        if not _take(marks, span):
            continue
        before = _scope_back(text.words, span.start)
        after = _scope_forward(text.words, span.stop)
        _apply(marks, range(before.start, after.stop), "report")


def _mark_undecided(text: _Text, marks: _Marks) -> None:
    """ "Maybe X, maybe not" / "X, or not": the statement before is left open, so it is
    neither the student's claim nor a denial (read like someone else's)."""
    for m in UNDECIDED.finditer(text.text):
        span = text.token_span(m)
        if not _take(marks, span):
            continue
        _apply(marks, _scope_back(text.words, span.start), "report")


def _mark_odds(text: _Text, marks: _Marks) -> None:
    """ "20% on X and 80% on Y", "70/30 that X; the 30 is Y": the likelier side is the
    student's answer, given as a guess; the unlikelier one is not theirs."""
    found = [(m, int(m.group("n"))) for m in ODDS.finditer(text.text)]
    for k, (m, n) in enumerate(found):
        later = text.token_span(found[k + 1][0]).start if k + 1 < len(found) else None
        _mark_span(text, text.token_span(m), marks, "report" if n < 50 else "hedge", later)
    split = ODDS_SPLIT.match(text.text)
    if split is None:
        return
    a, b = int(split.group("a")), int(split.group("b"))
    share = re.compile(ODDS_SHARE.format(min(a, b)))
    later = next((text.token_span(m).start for m in share.finditer(text.text)), None)
    _mark_span(text, text.token_span(split), marks, "report" if a < b else "hedge", later)
    if a != b:
        for m in share.finditer(text.text):
            _mark_span(text, text.token_span(m), marks, "report")


# An answer word typed without its comma before a clause with a subject of its own ("No they
# differ", "so no they're not the same", "yes it is"): the reply, not a negation of the clause
_ANSWER_WORDS = frozenset("no nope nah yes yep yeah".split())
_REPLY_SUBJECTS = frozenset("they it we i the these those both each every".split())


def _bare_answers(words: list[str], marks: _Marks) -> None:
    for i, w in enumerate(words[:-1]):
        if (
            w in _ANSWER_WORDS
            and (i == 0 or words[i - 1] in CLAUSE_PUNCTUATION or words[i - 1] in OPENERS)
            and words[i + 1] in _REPLY_SUBJECTS
        ):
            marks.cue[i] = True
            marks.breaks.add(i + 1)


def _trailing_answer(words: list[str], marks: _Marks) -> None:
    """A statement without a verb and a bare answer after it ("More heads more parameters no.",
    "same count for both yes"): a note's way to deny (or affirm) what it names."""
    if len(words) < 3 or words[-1] not in _ANSWER_WORDS | {"never"}:
        return
    before = range(_scope_back(words, len(words) - 1).start, len(words) - 1)
    if len(before) < 2 or any(words[i] in VERBS or words[i] in NEGATORS for i in before):
        return
    marks.cue[-1] = True
    if words[-1] not in YES:
        _apply(marks, before, "deny")


def _read(words: list[str]) -> _Marks:
    marks = _Marks(len(words))
    text = _Text(words)
    _bare_answers(words, marks)
    _trailing_answer(words, marks)
    # the course material cited, then hedges: "the notebook apparently shows X" cites it (its
    # "apparently" is part of the citation); "if I'm not mistaken" is no condition, its "not" no
    # negation
    _mark_forward(text, CITED, marks, "cite")
    # who else says so, before hedges: "everyone seems to believe X" reports X
    _attribute(text, marks)
    _mark_undecided(text, marks)  # before hedges: its "maybe" is part of "maybe not"
    fronted = FRONTED_OPEN.match(text.text)
    if fronted:  # "Whether X or Y, I'm not sure.": X and Y left open
        tail = bisect_right(text.starts, fronted.start("tail")) - 1
        for i in range(tail, len(words)):
            marks.cue[i] = True
        _apply(marks, range(tail), "report")
    _mark_odds(text, marks)
    _mark_forward(text, HEDGE, marks, "hedge")
    for m in HEDGE.finditer(text.text):
        # a proviso opening the sentence ("If memory serves, there is ...", "As far as I know,
        # they ..."): it governs the clause after its comma (which may read as ";" by now)
        span = text.token_span(m)
        if (
            span
            and all(w in OPENERS for w in words[: span.start])
            and words[span.stop : span.stop + 1] in ([","], [";"])
        ):
            _apply(marks, _scope_forward(words, span.stop + 1), "hedge")
    for pattern in (NEG_OPENING, POS_OPENING):
        m = pattern.match(text.text)
        if m:  # "It's false: ..." judges the sentence before; the rest is the student's own
            for i in text.token_span(m):
                marks.cue[i] = True
    for m in CONTRARY.finditer(text.text):
        # "contrary to what some claim, X": the part before the comma is theirs, X the student's
        span = text.token_span(m)
        end = next((i for i in range(span.stop, len(words)) if words[i] in ",;:"), len(words))
        for i in range(span.start, end):
            marks.cue[i] = True
    # "it's not untrue that X": X is the student's (before FALSE_THAT reads "untrue that X")
    _mark_forward(text, TRUE_THAT, marks, "endorse")
    for m in NOTHING_BUT.finditer(text.text):
        span = text.token_span(m)
        for i in (span.start, span.stop - 2, span.stop - 1):
            # (the negation and "anything but": "be" between them stays a word)
            if text.words[i] in (
                "not",
                "never",
                "nothing",
                "anything",
                "but",
                "other",
                "than",
                "except",
                "else",
            ):
                marks.cue[i] = True
    for pattern in (
        MISTAKE_IS,
        FALSE_THAT,
        WRONG_TO_SAY,
        IGNORE,
        NOBODY,
        I_DENY,
        I_DOUBT,
        NOUN_DENY,
    ):
        _mark_forward(text, pattern, marks, "deny")
    for pattern in (
        OTHERS_SAY,
        GENERIC_SAY,
        IT_IS_SAID,
        ACCORDING,
        I_REPORTED,
        NOUN_REPORT,
        SOURCE_LABEL,
        IN_WORDS,
        OPEN_QUESTION,
        NAMED_ANSWER,
    ):
        _mark_forward(text, pattern, marks, "report")
    _mark_put_in(text, marks)
    _endorse(text, marks)
    # "..., which is false" / "..., and they're right:" judge what the sentence said before
    _mark_tail(text, marks)
    _now_see(text, marks)
    _elaborations(words, marks)
    _mark_conditions(words, marks)
    _mark_sarcasm(text, marks)
    return marks


def _mark_sarcasm(text: _Text, marks: _Marks) -> None:
    """ "Oh sure, X: Y, and from that we're meant to believe Z": a sentence opened in mockery
    claims none of what it says, its colons and its other cues included."""
    m = SARCASM.match(text.text)
    if m is None:
        return
    span = text.token_span(m)
    for i in span:
        marks.cue[i] = True
    _apply(marks, range(span.stop, marks.n), "report")


def _now_see(text: _Text, marks: _Marks) -> None:
    """ "I used to think X, but now I see they don't": a view reported or given up, then the
    student's own short answer to it; "they don't" denies X, "they do" makes it the student's."""
    for m in NOW_SEE.finditer(text.text):
        span = text.token_span(m)
        scope = _scope_back(text.words, span.start)
        if not any(marks.reported[i] for i in scope) or not _take(marks, span):
            continue
        _apply(marks, scope, "disown" if m.group(1) else "endorse")


_FIRST_PERSON = frozenset("i me my we us our mine".split())
_VERDICT = re.compile(rf"\b(?:{NEG_VERDICT}|{POS_VERDICT})$")


def _elaborations(words: list[str], marks: _Marks) -> None:
    """What follows a colon after someone else's idea or a citation spells that idea out ("the
    lecture showed that they differ: head 0 ..., head 1 ..."), so it is theirs too, unless the
    student speaks in it ("I", "my run") or a cue of its own governs it."""
    for c, w in enumerate(words):
        if w != ":" or c == 0 or marks.cue[c - 1]:
            continue
        how = "report" if marks.reported[c - 1] else "cite" if marks.cited[c - 1] else None
        cue = next((i for i in range(c - 1, -1, -1) if marks.cue[i]), None)
        # only the clause the cue itself governs ("..., and it didn't:" is not); the comma that
        # closes an opening cue ("According to the slides, X: Y") is the cue's own
        if how is None or cue is None:
            continue
        own = cue + 1 + (words[cue + 1 : cue + 2] == [","])
        if CLAUSE_PUNCTUATION & set(words[own:c]):
            continue
        if _VERDICT.search(" ".join(words[cue + 1 : c])):
            continue  # "the team's claim that X is misleading: ..." judges it, then speaks
        end = next((i for i in range(c + 1, len(words)) if words[i] in SCOPE_ENDS), len(words))
        after = range(c + 1, end)
        if any(marks.cue[i] for i in after) or _FIRST_PERSON & set(words[c + 1 : end]):
            continue
        _apply(marks, after, how)


def _not_so(words: list[str], begin: int) -> range | None:
    """The tokens of a short denial ("they didn't") starting at ``begin``, after a break."""
    while begin < len(words) and words[begin] in (";", ":", ",", "—", "–", "-"):
        begin += 1
    text = _Text(words[begin:])
    m = NOT_SO.match(text.text)
    if m is None:
        return None
    span = text.token_span(m)
    return range(begin + span.start, begin + span.stop)


def _contrary_to_fact(
    marks: _Marks, words: list[str], nxt: tuple[_Marks, list[str]] | None
) -> None:
    """A condition followed by a denial of it ("If the head count changed any shape, the totals
    would differ; they didn't." / "... we would see more parameters. We don't.") reasons about
    what is not so: its consequence is supposed, not claimed."""
    for condition, consequence in marks.conditions:
        end = max(condition.stop, consequence.stop)
        denial, where = _not_so(words, end), marks
        if denial is None and nxt is not None and end >= len(words):
            where = nxt[0]
            denial = _not_so(nxt[1], 0)
        if denial is None:
            continue
        # neither the condition nor what it would lead to is so: "If heads had their own
        # matrices it would double, but they don't" says heads have none, and it does not double
        for j in condition:
            marks.supposed[j] = False
            marks.flips[j] += 1
        for j in consequence:
            marks.supposed[j] = True
            marks.flips[j] += 1
        for j in denial:
            where.cue[j] = True


def interrogative(words: list[str]) -> bool:
    """A real question: one of its parts (the sentence, or what follows a comma or colon) opens
    with an auxiliary or a wh-word and asks about something ("Look at Wq: which of its shapes
    depends on num_heads?"). A tag ("..., isn't it?", "..., right?") asks nothing."""
    part: list[str] = []
    after = ""  # the punctuation the part follows
    for w in [*words, ","]:
        if w in CLAUSE_PUNCTUATION:
            # "..., which is then split into chunks?": a relative clause after a comma, not a
            # question (after a colon, "which of its shapes ...?" asks)
            if _asks(part) and not (after in _RELATIVE_AFTER and _relative(part)):
                return True
            part, after = [], w
        elif part or w not in OPENERS:
            part.append(w)
    return False


_RELATIVES = frozenset("which who whom whose where".split())
_RELATIVE_ADVERBS = frozenset("then also just only again now still later first".split())
_SEEM = frozenset("seem seems seemed appear appears appeared".split())


def _relative(part: list[str]) -> bool:
    """A relative clause: "which is then split", "which then seems to be cut" (not "which of
    its shapes depends", "which matrix grows": a question)."""
    if part[0] not in _RELATIVES:
        return False
    rest = [w for w in part[1:] if w not in _RELATIVE_ADVERBS]
    return bool(rest) and (rest[0] in VERBS or rest[0] in _SEEM)


_RELATIVE_AFTER = frozenset(", ; (".split())  # (the rewriting turns ", which" into "; which")


def _asks(part: list[str]) -> bool:
    return (
        bool(part)
        and part[0] in WH_OR_AUXILIARY
        and any(w not in PRONOUNS and w not in NEGATORS for w in part[1:])
    )


def _withdrawn(words: list[list[str]], marks: list[_Marks]) -> set[int]:
    """ "EDIT: scratch that", "I have no opinion", "no idea myself", "didn't check myself",
    "I copied that line from someone's notes", "draw your own conclusions", "we leave the
    verification of this premise to future work": the student withdraws their backing from
    everything the answer says before the disclaimer (in its sentence and the sentences before),
    which is then neither claimed nor denied; what they write after it is theirs ("scratch that.
    I reread my code: there is one Wq"). Returns the sentences of a devil's case answered in
    earnest (denied, so no longer questions: "surely they attend alike? In earnest, they
    don't")."""
    answered: set[int] = set()
    for k, w in enumerate(words):
        text = _Text(w)
        for m in WITHDRAWN.finditer(text.text):
            span = text.token_span(m)
            for i in span:
                marks[k].cue[i] = True
            _apply(marks[k], range(span.start), "report")
            for j in range(k):
                _apply(marks[j], range(marks[j].n), "report")
        # ownership refused ("not mine", "I don't hold this position", "I don't check her
        # maths: '...'"): the whole sentence, a quotation it introduces too, and those before
        for m in OWNERSHIP_REFUSED.finditer(text.text):
            span = text.token_span(m)
            for i in span:
                marks[k].cue[i] = True
            earnest = _earnest_after(words, k) if "advocate" in m.group(0) else None
            for j in range(k + 1):
                _apply(marks[j], range(marks[j].n), "report")
            if earnest is not None:
                # a devil's case the student then answers "in earnest": denied by that answer
                # (what the case says reads reversed), the earnest answer the student's own
                for j in range(k, earnest):
                    case = [i for i in range(marks[j].n) if not marks[j].cue[i]]
                    marks[j].reported = [False] * marks[j].n
                    _apply(marks[j], case, "disown")
                    answered.add(j)
    return answered


# the student's own answer to a devil's question, opening with a bare no: "In earnest: no.",
# "In earnest, they don't: ..." (an earnest answer in full sentences leaves the case reported)
_EARNEST = re.compile(
    r"^(?:but |now )?(?:in (?:all )?earnest(?:ness)?|in (?:all )?seriousness|seriously(?: though)?|"
    r"in truth|for real|speaking for myself)(?: [,;:])? (?:no|nope|not at all|of course not|"
    r"(?:they|it|he|she|that|this|heads?|the heads?) (?:do|does|did|is|are|was|were|would|will|"
    r"can) not)(?: [,;:]|$)"
)


def _earnest_after(words: list[list[str]], k: int) -> int | None:
    """The sentence after a devil's case (``k``, up to three on) that answers it "in earnest"
    with a bare no, if any."""
    for j in range(k + 1, min(k + 4, len(words))):
        if _EARNEST.match(" ".join(words[j])):
            return j
    return None


_SOURCE_AFTER = re.compile(r"[ \t]*\((?=[^()\n]*[a-z])[^()\n]{2,60}\)")


def unendorsed_quotations(
    text: str, sentences_of: Callable[[str], list[Sentence]]
) -> list[tuple[str, ...]]:
    """The words of each quotation the answer credits to someone else and never endorses: a
    statement in quotation marks (not a term in scare quotes) that what introduces it (its
    sentence up to the mark, or the sentence before when that one opens it with a colon) gives
    a source other than the student ("my sister texted me '...'", "overheard at the next table:
    '...'", "from last year's solutions: '...'") is that source's claim, neither claimed nor
    denied, unless the student makes it theirs: "as X said, '...'", "I agree", "which matches my
    run" after it. The student's own evidence or the course's material quoted as evidence ("my
    run printed '...'", "the docstring says '...'") stays what it was. Each as the words of its
    sentences (``sentences_of``), to be found in the answer's."""
    found: list[tuple[str, ...]] = []
    lowered = text.lower().replace("’", "'").replace("‘", "'")
    for m in QUOTATION.finditer(lowered):
        quoted = m.group(1)
        if len(re.findall(r"[a-z0-9_]+", quoted)) < QUOTATION_MIN_WORDS:
            continue
        before = lowered[: m.start()]
        intro = re.split(r"(?<=[.!?])\s+|\n\s*\n", before)
        opening = intro[-1]
        if len(re.findall(r"[a-z]+", opening)) < 2 and len(intro) > 1:
            opening = intro[-2] + " " + opening
        if re.match(r"\s*(?:as|like) ", opening) or QUOTATION_ENDORSED.search(lowered[m.end() :]):
            continue
        # a quotation that opens its sentence with its source in brackets after it ('"..."
        # (the module's docstring). ✓ In my run ...'): the words annotated, not the student's
        labelled = not opening.strip(" \t\n-*•>") and _SOURCE_AFTER.match(lowered[m.end() :])
        if not labelled and (not QUOTATION_SOURCE.search(opening) or QUOTATION_OWN.search(opening)):
            continue
        for sentence in sentences_of(quoted):
            words = tuple(t.word for t in sentence.tokens)
            if words:
                found.append(words)
    return found


def _unclaim_quoted(
    words: list[list[str]], marks: list[_Marks], quoted: list[tuple[str, ...]]
) -> None:
    """Each quotation's words, where the answer has them: someone else's claim."""
    for q in quoted:
        n = len(q)
        for k, w in enumerate(words):
            at = next((i for i in range(len(w) - n + 1) if tuple(w[i : i + n]) == q), None)
            if at is not None:
                _apply(marks[k], range(at, at + n), "report")
                break


def _ironic(words: list[list[str]], marks: list[_Marks], scare_quotes: int) -> bool:
    """Mockery: two signs of irony in one answer (terms in scare quotes, a mock "Oh yes," opening
    a sentence, "heaven forbid", a closing "Sure."): the answer claims nothing it says (one sign
    alone may be a manner of speaking). Whether it was."""
    signs = scare_quotes
    for w in words:
        text = " ".join(w)
        signs += bool(IRONY_OPENING.match(text)) + len(IRONY_INLINE.findall(text))
        signs += bool(IRONY_CLOSER.match(text))
    if signs < 2:
        return False
    for w, m in zip(words, marks, strict=True):
        text = " ".join(w)
        if IRONY_CLOSER.match(text):
            m.cue = [True] * m.n
        _apply(m, range(m.n), "report")
    return True


def _no_vouch(words: list[list[str]], marks: list[_Marks], k: int) -> bool:
    """ "That's what the notes say; I can't confirm it.", "I'd want to see it on more seeds
    before believing it.": the student does not vouch for what came before, the clauses before
    it and the sentence before, which are then neither claimed nor denied (whether it did)."""
    m = NO_VOUCH.search(" ".join(words[k]))
    if m is None:
        return False
    span = _Text(words[k]).token_span(m)
    # (its words may have been read as another cue: "... to say if that's true" as a condition)
    for i in span:
        marks[k].cue[i] = True
    _apply(marks[k], range(span.start), "report")
    # ("X, though I could not confirm it": a concession about its own sentence only)
    if k and not ({"though", "although"} & set(words[k][max(span.start - 1, 0) : span.start + 1])):
        _apply(marks[k - 1], range(marks[k - 1].n), "report")
    return True


def verdict(words: list[str]) -> tuple[str, bool] | None:
    """("deny" or "endorse", whole) when the sentence judges the one before it: the whole
    sentence ("That is false.", "I never believed it.", "They're right.") or its opening
    ("It's false: in my run ...")."""
    text = " ".join(words)
    for pattern, how, whole in (
        (NEG_SENTENCE, "deny", True),
        (POS_SENTENCE, "endorse", True),
        (ENDORSE_SENTENCE, "endorse", True),
        (NEG_OPENING, "deny", False),
        (POS_OPENING, "endorse", False),
        (ENDORSE_OPENING, "endorse", False),
    ):
        if pattern.match(text):
            if pattern is ENDORSE_OPENING and _TURNS & set(words):
                return None  # "I checked this and it's wrong": what the check found decides
            return how, whole
    return None


# what a check may have found against the claim: "I checked it, and it is not so"
_TURNS = frozenset("not never no nope wrong false incorrect untrue but however except".split())


# A bare "no" in more words, answering a question the student asked ("Same pattern? Not at all:
# ..."): the words, as the grader tokenises them
BARE_NO = (
    ("not", "at", "all"),
    ("not", "really"),
    ("absolutely", "not"),
    ("definitely", "not"),
    ("certainly", "not"),
    ("of", "course", "not"),
    ("not", "even", "close"),
    ("obviously", "not"),
    ("clearly", "not"),
    # a note's question answered with a quantity of none: "Own matrices per head? None."
    ("none",),
    ("none", "at", "all"),
    ("zero",),
)


# A reply that opens with a negation and has no verb of its own ("Never in my runs.", "Not once
# with my seed.", "Nowhere near."): a bare "no" with the circumstances it holds in
REPLY_NEGATIVES = frozenset("never not no nope nah nowhere".split())
REPLY_MAX_WORDS = 6
_NOUN_AFTER = frozenset("my our your the a an this that these those his her their any".split())


def _bare_no(words: list[str]) -> int:
    """How many words open ``words`` as a bare "no" in more words, if any (else 0)."""
    for phrase in BARE_NO:
        n = len(phrase)
        if tuple(words[:n]) == phrase and (len(words) == n or words[n] in CLAUSE_PUNCTUATION):
            return n
    if len(words) > 1 and words[0] in REPLY_NEGATIVES:
        n = next((i for i, w in enumerate(words) if w in CLAUSE_PUNCTUATION), len(words))
        # ("in my runs": a noun after a determiner, not a verb)
        verbs = [
            w for i, w in enumerate(words[1:n], 1) if w in VERBS and words[i - 1] not in _NOUN_AFTER
        ]
        if n <= REPLY_MAX_WORDS and not verbs and not _UNSURE & set(words[:n]):
            return n
    return 0


# a reason given at once after "why ...?": "Because ...", "So that ...", "Since ..."
_REASON_OPENERS = frozenset("because since so as to cause cuz".split())
# "why must / does / is X?" takes X for granted; "why would X?" only supposes it
_WHY_FACTUAL = frozenset("must does do is are has have did was were can".split())


def _why_answered(question: list[str], after: list[str]) -> bool:
    """A "why" question whose answer, a reason, opens the next sentence."""
    rest = [w for w in question if w not in OPENERS]
    return (
        len(rest) > 2
        and rest[0] == "why"
        and rest[1] in _WHY_FACTUAL
        and bool(after)
        and after[0] in _REASON_OPENERS
    )


# "not sure", "no idea": the student's doubt about their own answer (a hedge), not a "no"
_UNSURE = frozenset("sure certain convinced confident positive clear idea clue know".split())


def _true_false_items(words: list[list[str]], marks: list[_Marks]) -> set[int]:
    """The sentences a true/false sheet's label opens, when two or more do: "False: X" denies
    X, "True: X" states it, "True or false, not sure: X" leaves it open; none judges the
    sentence before it."""
    found = {k: m for k, w in enumerate(words) if (m := TF_LABEL.match(" ".join(w)))}
    if len(found) < 2:
        return set()
    for k, m in found.items():
        text = _Text(words[k])
        span = text.token_span(m)
        marks[k].cue[: span.stop] = [True] * span.stop
        marks[k].breaks.add(span.stop)
        rest = range(span.stop, marks[k].n)
        if m.group("false"):
            _apply(marks[k], rest, "deny")
        elif m.group("open"):
            _apply(marks[k], rest, "report")
    return set(found)


def read_stances(
    sentences: list[Sentence],
    pasted: list[bool] | None = None,
    scare_quotes: int = 0,
    quoted: list[tuple[str, ...]] = (),
) -> list[Stances]:
    """Each sentence's stances. ``pasted`` marks sentences that copy the question: they ask,
    whatever their punctuation. A statement that ends in "?" is a hedged claim; a real question
    claims nothing, unless the next sentence answers it with a bare "No." or "Yes.". A sentence
    that only judges the one before ("That is false.") claims nothing itself."""
    words = [[t.word for t in s.tokens] for s in sentences]
    marks = [_read(w) for w in words]
    asks = []
    for k, sentence in enumerate(sentences):
        if pasted and pasted[k]:
            asks.append(True)
            continue
        if not sentence.question:
            asks.append(False)
            continue
        after = words[k + 1][:1] if k + 1 < len(words) else []
        asked = interrogative(words[k]) or bool(
            (after and after[0] in YES | NO) or (k + 1 < len(words) and _bare_no(words[k + 1]))
        )
        if asked and _why_answered(words[k], after):
            # "Why must d_model divide evenly? Because ...": the student asks why X and gives
            # the reason at once, so X is theirs (what the question takes for granted)
            asks.append(False)
            continue
        asks.append(asked)
        if not asked:  # "I think it's the same, maybe?": a claim, made as a guess
            marks[k].hedged = [True] * marks[k].n
    for k in range(len(sentences)):
        following = (marks[k + 1], words[k + 1]) if k + 1 < len(sentences) else None
        _contrary_to_fact(marks[k], words[k], following)
    unvouched = [_no_vouch(words, marks, k) for k in range(len(sentences))]
    for k, sentence in enumerate(sentences):
        m = OPEN_VERDICT.match(" ".join(words[k]))
        if m and k and (sentence.question or m.group("open")):
            # "Claim (lecture): ... / Verdict: ???": nothing before it is the student's claim
            marks[k].cue = [True] * marks[k].n
            asks[k] = False
            for before in marks[:k]:
                _apply(before, range(before.n), "report")
    labelled = _true_false_items(words, marks)
    for k in range(1, len(sentences)):
        w = words[k]
        if k in labelled:
            continue
        judged = verdict(w)
        if judged is None and asks[k - 1] and w and (len(w) == 1 or w[1] in CLAUSE_PUNCTUATION):
            # "Does it? No." / "Does it? Yes, so ...": the answer judges the question
            whole = len(w) == 1
            judged = ("deny", whole) if w[0] in NO else ("endorse", whole) if w[0] in YES else None
            if judged and not whole:
                marks[k].cue[0] = True
        if (
            judged is None
            and asks[k - 1]
            and (n := _bare_no(w))
            and (not interrogative(words[k - 1]) or tuple(w[:n]) in BARE_NO)
        ):
            # "Same pattern? Not at all: ...": the words are the answer, not a negation of what
            # follows them; a real question is answered by a "no" in more words as by "No."
            # ("Do they agree? Obviously not, why would they?"), not by a verbless reply that
            # only opens with a negation ("Do they agree? Never in my runs" stays open)
            judged = ("deny", len(w) == n)
            for i in range(n):
                marks[k].cue[i] = True
        if judged is None and unvouched[k]:
            continue
        if judged is None:
            continue
        how, whole = judged
        if whole:
            marks[k].cue = [True] * len(w)
        _apply(marks[k - 1], range(marks[k - 1].n), "disown" if how == "deny" else how)
        asks[k - 1] = False  # a question answered: its words are now claimed, or denied
    for k in _withdrawn(words, marks):
        asks[k] = False
    _unclaim_quoted(words, marks, quoted)
    if _ironic(words, marks, scare_quotes):
        asks = [False] * len(sentences)
    return [
        Stances(
            tuple(clause_starts(w, m.breaks)),
            tuple(m.reported),
            tuple(m.flips),
            tuple(m.hedged),
            tuple(m.supposed),
            tuple(m.otherwise),
            tuple(m.cue),
            tuple(m.conditions),
            asked,
            tuple(m.cited),
        )
        for w, m, asked in zip(words, marks, asks, strict=True)
    ]
