"""Is an answer written in English? The rubrics' phrasings are English, so an answer in another
language would score 0 however right it is: it goes to a teacher instead.

Three signals, all cheap and all stated in words a teacher can check: letters from a non-Latin
script (Greek, Cyrillic, CJK, Arabic...), letters with diacritics (ă, ş, ł, ř, é...) in a share
no English answer has, or the common function words of another language written in Latin
letters outnumbering English ones. Notation (d_model, Wq, 256) counts for none, so a terse
answer in symbols is English enough. Words that are common in both English and another language
("a", "in", "die", "do", "as", "no", "is", "her", "care") are left out of the foreign lists.
"""

from __future__ import annotations

import re
import unicodedata

from .text import FUNCTION_WORDS

# Frequent function words of French, German, Spanish, Italian, Portuguese, Dutch, then Swedish,
# Danish and Norwegian, Polish, Czech and Slovak, Romanian, Turkish, Indonesian and Malay,
# Finnish, Hungarian, that are not also English words students use.
FOREIGN_FUNCTION_WORDS = frozenset(
    """
    le la les des du une est et dans pour qui que pas sont aux avec sur mais ou donc chaque cette
    ces son sa ses leur leurs nous vous elle ils une être fait peut aussi plus très sans entre
    der das und ist nicht ein eine einer eines einem einen mit für auf dem den des sind wird auch
    oder aber jeder jede jedes wenn weil dass durch zu von bei nur noch kein keine sein ihre
    el los las del y es por con una para lo se su sus como pero cada más sin entre también cuando
    il lo gli di che è per non sono della delle dei degli alla nel nella con una ogni anche più
    o os um uma em não são cada seu sua pelo pela dos das ao mais também quando porque
    het een van en niet zijn met voor op ook maar elke wordt dan als bij worden geen heeft hebben
    deze dat er wat naar nog kan kunnen moet uit door tot omdat zonder alle alleen daarna dezelfde
    hetzelfde keer wel ze zij hun
    sind werden wurde kann können muss müssen nach vor über unter zwischen ohne alle beide gleich
    dieselben denselben derselben dann also jedoch hat haben
    sont ont été cette celui celle entre selon alors ainsi tous toutes même mêmes chaque
    tienen tiene son fue cada uno entre mismo misma mismos después antes todas todos siempre
    hay está están sólo solo
    hanno ha essere stesso stessa stessi tutti tutte sempre perché quindi ciascuna ciascun
    têm tem foi mesmo mesma todos todas sempre depois entre só
    och är att det som ett för med inte på av har alla samma varje eller också bara jeg ikke og
    af hver samme alle også kun efter eftersom fordi hvor hvis
    jest nie się na że ma są oraz tylko każda każdy każde tak jak czy dla przez ale lub więc
    je se že má jsou jen každá každý každé jako pro aby nebo ale také takže protože
    și este sunt nu cu pe în care fiecare același aceeași pentru că fie dintr dintre sau doar
    ve bir bu her için ile değil olarak aynı daha çok gibi ama veya sadece hem
    dan yang di ini itu dengan untuk tidak ada adalah setiap sama dari atau juga hanya karena
    ja ei että kuin joka jokainen myös tai vain koska sama
    és az nem hogy van egy minden csak mert vagy szintén
    """.split()
)
# English words also spelled as one of the foreign words above are kept out of that set; these
# are English function words too common to count against an answer.
_ENGLISH = FUNCTION_WORDS | frozenset(
    "no not every one two same each per her care van den ma ja".split()
)
_FOREIGN = FOREIGN_FUNCTION_WORDS - _ENGLISH
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_FOREIGN_WORDS = 3
NON_LATIN_SHARE = 0.3  # of the letters
# English spells almost every word without diacritics: a few loan words ("naïve", "café") stay
# under both of these
MIN_DIACRITICS = 4
DIACRITIC_SHARE = 0.04  # of the letters


def _latin(ch: str) -> bool:
    return ch < "\u0250"  # Basic Latin, Latin-1 Supplement, Latin Extended-A and -B


def _diacritic(ch: str) -> bool:
    return "\u00c0" <= ch < "\u0250" and ch not in "×÷"


def other_language(text: str) -> bool:
    """True when the answer reads as written in a language other than English."""
    if not text.isascii():  # (ASCII letters are all Latin, none marked: most answers)
        letters = _LETTER.findall(text)
        if letters and sum(not _latin(c) for c in letters) >= NON_LATIN_SHARE * len(letters):
            return True
        marked = sum(_diacritic(c) for c in letters)
        if marked >= MIN_DIACRITICS and marked >= DIACRITIC_SHARE * len(letters):
            return True
    words = [w.lower() for w in _WORD.findall(text)]
    foreign = sum(w in _FOREIGN for w in words)
    english = sum(w in _ENGLISH for w in words)
    return foreign >= MIN_FOREIGN_WORDS and foreign > english


# -- what a person sees --------------------------------------------------------------------

# Letters of other scripts that look like a Latin letter in common fonts (Unicode's confusables,
# the Cyrillic and Greek ones), and the Latin letter a reader takes each for.
LOOKALIKES = str.maketrans(
    "аеорсхуіјѕԁһԛԝӏАВЕКМНОРСТХУІЈЅαοριυνκχτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcxyijsdhqwlABEKMHOPCTXYIJSaopiuvkxtABEZHIKMNOPTYX",
)
_LOOKS_LATIN = frozenset("аеорсхуіјѕԁһԛԝӏАВЕКМНОРСТХУІЈЅαοριυνκχτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ")
# Characters no reader sees that are not format characters (Cf): the combining grapheme joiner,
# variation selectors, fillers that render as nothing.
_UNSEEN = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0]")


def _seen_char(ch: str) -> str:
    """A character as a reader takes it: a format character (a soft hyphen, a zero-width space,
    a bidirectional control) or a combining mark is nothing; a letter written in another style
    of a Latin one (full width, mathematical bold or italic) is that letter."""
    kind = unicodedata.category(ch)
    if kind in ("Cf", "Mn", "Me"):
        return ""
    if kind in ("Lu", "Ll") and ("\uff21" <= ch <= "\uff5a" or "\U0001d400" <= ch <= "\U0001d7ff"):
        plain = unicodedata.normalize("NFKC", ch)  # (not "ℕ", a set's name in notation)
        if plain != ch and plain.isascii() and plain.isalpha():
            return plain
    return ch


def _seen_word(word: str) -> str:
    """A word whose letters are all Latin or look Latin, some of them of another script, read as
    the Latin word it looks like; any other word as written (a Greek letter standing alone is a
    symbol, a Greek or Russian word is a word)."""
    if not any(c in _LOOKS_LATIN for c in word):
        return word
    if len(word) == 1 and not "\u0400" <= word <= "\u052f":
        return word  # a Greek letter standing alone: a symbol (a Cyrillic "а" is the word "a")
    if all(c in _LOOKS_LATIN or (c.isascii() and c.isalpha()) for c in word):
        return word.translate(LOOKALIKES)
    return word


def as_seen(text: str) -> tuple[str, bool]:
    """``text`` as a person reading the rendered answer takes it, and whether some word of it
    mixed in letters of another script that look Latin: the grader reads what the person reads,
    so a claim written with soft hyphens or zero-width characters inside its words, or with a
    Cyrillic "а" for an "a", is read as the words it shows."""
    if text.isascii():
        return text, False
    seen = _UNSEEN.sub("", "".join(_seen_char(c) for c in text))
    folded = _WORD.sub(lambda m: _seen_word(m.group()), seen)
    return folded, folded != seen
