"""Answers a person should read: contradictory, a bare keyword list, far longer than needed."""

from __future__ import annotations

from dataclasses import dataclass

from .match import Status
from .rubric import Rubric
from .text import FUNCTION_WORDS, words

KEYWORD_LIST_MIN_WORDS = 3
KEYWORD_LIST_MAX_FUNCTION_SHARE = 0.12  # prose runs at 0.3-0.5 function words; lists near 0


@dataclass(frozen=True)
class Flag:
    id: str
    cap: float  # the largest share of the points the answer may get while flagged
    message: str


CONTRADICTORY = Flag(
    "contradictory",
    0.5,
    "Your answer seems to say two things that cannot both be true; a teacher will read it and "
    "set the final score.",
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


def is_keyword_list(text: str) -> bool:
    tokens = words(text)
    if len(tokens) < KEYWORD_LIST_MIN_WORDS:
        return False
    share = sum(t in FUNCTION_WORDS for t in tokens) / len(tokens)
    return share <= KEYWORD_LIST_MAX_FUNCTION_SHARE


def flags_for(rubric: Rubric, text: str, status: dict[str, Status], earned: float) -> list[Flag]:
    """Which flags an answer raises; ``earned`` is its weight before any cap."""
    found = []
    both = any(s is Status.BOTH for s in status.values())
    mixed = earned > 0 and any(s is Status.CONTRADICTED for s in status.values())
    if both or mixed:
        found.append(CONTRADICTORY)
    if is_keyword_list(text):
        found.append(KEYWORD_LIST)
    if len(words(text)) > rubric.max_words:
        found.append(TOO_LONG)
    return found
