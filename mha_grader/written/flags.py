"""Answers a person should read: contradictory, a wrong idea beside right ones, a reading in
doubt, a bare keyword list, far longer than needed, or not in English."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cues import AI_REPLY, AUXILIARIES
from .match import Status
from .reading import Reading
from .rubric import Rubric
from .text import FUNCTION_WORDS, words

KEYWORD_LIST_MIN_WORDS = 3
KEYWORD_LIST_MAX_FUNCTION_SHARE = 0.12  # prose runs at 0.3-0.5 function words; lists near 0
# A keyword list is items (split at commas, semicolons, line and sentence ends) of a few words
# without a function word; a terse sentence ("num_heads divides d_model.") is one item.
KEYWORD_ITEM_MAX_WORDS = 4
KEYWORD_LIST_MIN_ITEMS = 3
KEYWORD_FRAGMENTS_MIN_ITEMS = 4  # verbless fragments, half of them bare: a list however spelled
KEYWORD_RUN_MIN_WORDS = 5  # "same 256 reshape d_model x d_model": one item, but no sentence
KEYWORD_RUN_ANY_VERB = 8  # words without a function word: a list, whatever verbs are in it
KEYWORD_RUN_FUNCTION = 1  # function words such a long run may hold and still be a list
_PUNCTUATED = re.compile(r"[.,;:?()]|!(?!=)")
_ITEM_BREAK = re.compile(r"[,;\n]|(?<=[.!?])\s|\s[/+·•]\s")
# a label that announces a list of keywords: "Keywords: ...", "Buzzwords - ...", "Tags: ..."
_KEYWORD_LABEL = re.compile(
    r"^\s*(?:key ?words?|key ?terms?|buzz ?words?|tags?|terms|concepts|vocab(?:ulary)?|"
    r"important words|main words)\s*(?:[:=]|[-–—]\s)\s*",
    re.IGNORECASE,
)
KEYWORD_LABEL_BARE_SHARE = 0.5  # of a labelled list's items: bare enough to be keywords
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# a comma between a call's arguments, "allclose(weights[0], weights[1])": code, no break between
# the items of a list (a vector's entries, "[0, 0, 0.424, 0.576, 0]", are still values apart)
_CALL = re.compile(r"(?<=\w)\(([^()\n]*)\)")


def _call_commas_out(text: str) -> str:
    """The text with the commas between a call's arguments made spaces."""
    return _CALL.sub(lambda m: "(" + m.group(1).replace(",", " ") + ")", text)


_SYMBOLS = frozenset("q k v o x h n wq wk wv wo".split())
# Verbs in the third person: a bare run of words with one of them is a terse sentence.
AGREEING_VERBS = frozenset(
    """owns shares splits divides gets has uses takes computes produces adds needs makes sees
    looks attends focuses stays remains changes differs loses keeps runs works becomes means
    allows cuts reshapes projects happens shows prints returns depends receives learns applies
    goes comes gives grows increases decreases shrinks doubles matters serves forces captures
    handles mixes share divide differ attend compute produce depend receive lose get become stay
    remain""".split()
)


# A comparison: "it's like ...", "think of ...", "imagine ...", "like cutting a pizza".
_ANALOGY = re.compile(
    r"\b(?:it(?:'s| is) like|is like|are like|think of|imagine|picture|as if|analogy|metaphor|"
    r"like (?:a|an|one|two|eight|having|cutting|sharing|giving|replacing|reading|slicing|"
    r"splitting|asking|using))\b",
    re.IGNORECASE,
)
ANALOGY_MIN_WORDS = 12
ANALOGY_READ_BELOW = 0.75  # of the points: an analogy read well enough stands alone

# An answer that states a wrong idea and still keeps more than this share of the points after
# its penalty says enough that is right for a teacher to weigh the two; below it, the wrong
# idea is what the answer says, and its penalty stands.
MIXED_KEEPS_SHARE = 0.25
# ... or states, in clauses of their own apart from the wrong idea's, right ideas worth at least
# this share: "more heads give more softmaxes, but each head sees fewer tokens" says one thing
# right and one wrong, whatever the penalty leaves
MIXED_APART_SHARE = 0.5


@dataclass(frozen=True)
class Flag:
    id: str
    cap: float  # the largest share of the points the answer may get while flagged
    message: str
    review: bool = True  # a person reads the answer (False: the cap and the message only)


CONTRADICTORY = Flag(
    "contradictory",
    0.5,
    "Your answer seems to say two things that cannot both be true; a teacher will read it and "
    "set the final score.",
)
MIXED = Flag(
    "mixed",
    0.5,
    "Your answer states some of the ideas asked for, and also an idea the module shows is "
    "wrong; a teacher will read it and set the final score.",
)
# ... unless the reading is certain: every idea asked for stated, each in clauses of its own,
# apart from the wrong idea's: a full answer with a wrong idea beside it is half marks by the
# course's convention (the penalty), no teacher needed to weigh the two
MIXED_PLAIN = Flag(
    "mixed-plain",
    0.5,
    "Your answer states the ideas asked for, and also an idea the module shows is wrong: the "
    "wrong idea costs half the points.",
    review=False,
)
UNSURE = Flag(
    "unsure",
    0.5,
    "Part of your answer can be read in two ways, one of them a common misunderstanding; a "
    "teacher will read it and set the final score.",
)
KEYWORD_LIST = Flag(
    "keyword-list",
    0.25,
    "This reads as a list of keywords rather than sentences. Explain the idea in a few sentences "
    "of your own; a teacher will read this answer.",
)
TOO_LONG = Flag(
    "too-long",
    0.5,
    "This answer is far longer than the two to four sentences asked for; a teacher will read it "
    "and set the final score. A short answer that states the idea is what is wanted.",
)
# A list of terms that names few of the ideas and states nothing (no value, no comparison, no
# negation: "Parameter efficiency, weight sharing, numel"): a person would give it no more than
# its cap (a quarter of the points), so it is not sent to one. A list that names most of the
# ideas, holds numbers (a measured value, a row of weights) or says something of its terms ("no
# own Wq", "one distribution only", "params != performance", "equal chunks") may be terse notes
# that say it all: a teacher reads that one.
KEYWORD_TERMS = Flag(
    "keyword-terms",
    0.25,
    "This reads as a list of keywords rather than sentences, and it names few of the ideas "
    "asked for. Explain the idea in a few sentences of your own.",
    review=False,
)
KEYWORD_TERMS_MAX_SHARE = 0.5  # of the question's weight, named by the list's terms
_STATES = re.compile(
    r"\d|[=<>]|\b(?:no|not|never|only|vs|versus|than|same|equal|different|differ|more|fewer|"
    r"less|smaller|larger|bigger|wider|narrower|lost|lose|loses|per)\b",
    re.IGNORECASE,
)
ANALOGY = Flag(
    "analogy",
    0.5,
    "Your answer explains by a comparison, which the automatic grading cannot map to the ideas "
    "this question asks about; a teacher will read it and set the final score. Saying which part "
    "of the layer each part of your picture stands for makes it clear to any reader.",
)
# An answer in an AI assistant's reply's own words ("Certainly! Here's a concise answer:", "As
# an AI language model", "I hope this helps!"): a source, which the student may have checked or
# not; a person reads it (the course's rules on such help are theirs to apply), and it is never
# graded in full without one. The message says only what was seen.
AI_REPLY_CAP = 0.5


def ai_reply(text: str) -> Flag | None:
    """The flag for an answer that holds an AI assistant's reply's boilerplate, quoting it."""
    m = AI_REPLY.search(text)
    if m is None:
        return None
    seen = " ".join(m.group(0).split()).strip(" :")
    return Flag(
        "ai-reply",
        AI_REPLY_CAP,
        f'Your answer contains wording typical of an AI assistant\'s reply ("{seen}"); a '
        "teacher will read it and set the final score. State what you found in your own words.",
    )


OTHER_LANGUAGE = Flag(
    "other-language",
    0.5,
    "This answer seems to be written in a language other than English, which the automatic "
    "grading cannot read. A teacher will read it and set the score; until then it counts for half "
    "the points. Answers in English are graded automatically.",
)


# a note's "label: value" ("1 head: 256 parameters", "d_head = 4", "h0 -> token 4") states a fact
_NOTE = re.compile(r"\w\s*(?::|=|->|→)\s*\w")


# An item that compares ("256 vs 256") or denies ("not new weights", "no private ones") makes
# a claim, however terse.
CLAIM_WORDS = frozenset("vs versus than not no never".split())


def _is_keyword_item(item: list[str]) -> bool:
    return (
        len(item) <= KEYWORD_ITEM_MAX_WORDS
        and not any(w in FUNCTION_WORDS for w in item)
        and not any(w in CLAIM_WORDS for w in item[:2])
    )


def is_keyword_list(text: str) -> bool:
    """Few function words overall, and either several short items or one long run of bare words:
    "d_model, num_heads, divisible, equal chunks" or "different patterns heads subspace allclose"
    but not "num_heads divides d_model." or "Same count, 256. Heads are just a reshape."."""
    label = _KEYWORD_LABEL.match(text)
    if label:  # the student calls it a list of keywords: it is one when its items are bare
        text = text[label.end() :]
    tokens = words(text)
    if len(tokens) < KEYWORD_LIST_MIN_WORDS:
        return False
    share = sum(t in FUNCTION_WORDS for t in tokens) / len(tokens)
    if label:
        items = [words(part) for part in _ITEM_BREAK.split(text) if words(part)]
        bare = [i for i in items if len(i) <= KEYWORD_ITEM_MAX_WORDS + 1]
        return len(items) >= KEYWORD_LIST_MIN_ITEMS and len(bare) >= KEYWORD_LABEL_BARE_SHARE * len(
            items
        )
    if share > KEYWORD_LIST_MAX_FUNCTION_SHARE:
        return False
    items: list[list[str]] = []
    noted: list[bool] = []  # the item is a note ("1 head: 256", "256 = 256"): a fact stated
    for part in _ITEM_BREAK.split(_call_commas_out(text)):
        item = words(part)
        if item and all(_NUMBER.fullmatch(w) for w in item):
            continue  # a vector's entries, "[0, 0, 0.424, 0.576, 0]": values, not keywords
        if items and len(item) == 1 and item[0] in _SYMBOLS:
            items[-1] += item  # "Q, K, V" and "Wq, Wk, Wv" are one item, not three
        elif item:
            items.append(item)
            noted.append(bool(_NOTE.search(part)))
    if sum(noted) * 2 > len(items):
        return False  # notes, one fact a line: terse, but sentences in effect
    bare = [i for i, note in zip(items, noted, strict=True) if not note and _is_keyword_item(i)]
    if len(items) >= KEYWORD_LIST_MIN_ITEMS and len(bare) * 4 >= len(items) * 3:
        return True
    # fragments: several short items, not one of them a clause or a note, half of them bare
    # ("shared projections; full d_model; split into chunks; per head; no separate Wq Wk Wv")
    if (
        len(items) >= KEYWORD_FRAGMENTS_MIN_ITEMS
        and not any(noted)
        and all(len(i) <= KEYWORD_ITEM_MAX_WORDS + 1 for i in items)
        and not any(w in AGREEING_VERBS or w in AUXILIARIES for i in items for w in i)
        and len(bare) * 2 >= len(items)
    ):
        return True
    # one run of bare words, not a sentence: no function word, no full stop, and no verb that
    # agrees with a subject ("no head owns private weights"), unless the run is too long to be
    # one terse clause ("different heads different patterns token 2 token 3 token 4 differ")
    # (a long run of words with no punctuation at all may hold one function word, often from
    # notation: "parameters != capability" reads "parameters not equal to capability")
    function = sum(t in FUNCTION_WORDS for t in tokens)
    one_run = (
        function <= KEYWORD_RUN_FUNCTION
        and sum(t.isalpha() for t in tokens) >= KEYWORD_RUN_ANY_VERB
        and not _PUNCTUATED.search(text)
    )
    return (
        (function == 0 or one_run)
        and len(tokens) >= KEYWORD_RUN_MIN_WORDS
        and (len(tokens) >= KEYWORD_RUN_ANY_VERB or not any(t in AGREEING_VERBS for t in tokens))
        and not re.search(r"[.!?]\s*$", text)
    )


def flags_for(rubric: Rubric, text: str, reading: Reading, earned: float) -> list[Flag]:
    """Which flags an answer raises; ``earned`` is its weight before any cap. Where the reading
    is in doubt (right and wrong claims side by side, a wrong idea that may be meant), a teacher
    decides rather than the grader trusting one side; an answer with nothing right in it is
    not in doubt."""
    found = []
    status = reading.status
    both = any(s is Status.BOTH for s in status.values())
    right = sum(rubric.weight(c) for c, s in status.items() if s is Status.RECOGNISED)
    mixed = right > 0 and any(s is Status.CONTRADICTED for s in status.values())
    if both or mixed:
        found.append(CONTRADICTORY)
    elif reading.misconceptions and (
        earned > MIXED_KEEPS_SHARE * rubric.total_weight
        or earned <= 0
        and sum(rubric.weight(c) for c in reading.apart) >= MIXED_APART_SHARE * rubric.total_weight
    ):
        full = all(
            s is Status.RECOGNISED and c in reading.apart
            for c, s in status.items()
            if rubric.weight(c) > 0
        )
        plain = full and earned > 0 and not reading.doubtful
        found.append(MIXED_PLAIN if plain else MIXED)
    if right and reading.doubtful:
        found.append(UNSURE)
    if is_keyword_list(text):
        few = right <= KEYWORD_TERMS_MAX_SHARE * rubric.total_weight
        found.append(KEYWORD_TERMS if few and not _STATES.search(text) else KEYWORD_LIST)
    if len(words(text)) > rubric.max_words:
        found.append(TOO_LONG)
    if (pasted := ai_reply(text)) is not None:
        found.append(pasted)
    # a picture ("one big cake baked once, a slice per head") may say all of it in words no
    # rubric holds: a teacher reads one that earns little, unless it states a wrong idea
    if (
        not found
        and not reading.misconceptions
        and earned < ANALOGY_READ_BELOW * rubric.total_weight
        and len(words(text)) >= ANALOGY_MIN_WORDS
        and _ANALOGY.search(text)
    ):
        found.append(ANALOGY)
    return found
