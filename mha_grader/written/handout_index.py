"""The hand-outs as each rubric reads them, read once when they change, not in every process.

Reading the hand-outs' 55 kB through each rubric's normaliser (their sentences, and their lines
for pasted headings) was most of a grading process's first answer sheet: a third of a second
that `mha-grade one` and every Gradescope run paid before grading. ``python -m
mha_grader.written.refresh`` writes the readings beside the snapshot
(``handouts_index.json.gz``), with a key made of everything they follow from: the snapshot, the
rubrics and the code that reads them. A process uses the file only when its key is that of the
files it has; otherwise (an edited rubric not yet written, a test's own hand-outs or rubrics)
it reads the hand-outs itself, as before. A test keeps the file equal to a fresh reading.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

from ..paths import RUBRICS
from .rubric import Rubric, load_rubrics
from .sources import SNAPSHOT, Handout, load_handouts
from .text import Sentence, Token

INDEX = RUBRICS / "handouts_index.json.gz"
_HERE = Path(__file__).resolve().parent
# the code a reading follows from: the words (text.py), the rubrics' phrases (rubric.py) and
# how the hand-outs are cut into sentences and lines (copies.py)
_CODE = ("text.py", "rubric.py", "copies.py")


@cache
def key() -> str:
    """What the readings follow from, hashed."""
    digest = hashlib.sha256()
    paths = [SNAPSHOT, *sorted(RUBRICS.glob("*.toml")), *(_HERE / name for name in _CODE)]
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def _ours(rubric: Rubric, handouts: tuple[Handout, ...]) -> bool:
    """The snapshot's hand-outs and the checkout's rubric (a test's own are read as given)."""
    return handouts is load_handouts() and load_rubrics().get(rubric.question) is rubric


@cache
def _stored() -> dict:
    try:
        data = json.loads(gzip.decompress(INDEX.read_bytes()))
    except (OSError, ValueError, EOFError):
        return {}
    return data.get("rubrics", {}) if data.get("key") == key() else {}


def _sentences(stored: dict) -> tuple[tuple[int, Sentence], ...]:
    # the file's table of tokens, each made once (as the normaliser makes one per word)
    tokens = [Token(word, stem, bool(canonical)) for word, stem, canonical in stored["tokens"]]
    return tuple(
        (h, Sentence(tuple(tokens[i] for i in indices), bool(question)))
        for h, question, indices in stored["sentences"]
    )


def stored_sentences(
    rubric: Rubric, handouts: tuple[Handout, ...]
) -> tuple[tuple[int, Sentence], ...] | None:
    """The hand-outs' sentences as ``rubric`` reads them, from the file; None when it cannot say."""
    stored = _stored().get(rubric.question) if _ours(rubric, handouts) else None
    return None if stored is None else _sentences(stored)


def stored_lines(
    rubric: Rubric, handouts: tuple[Handout, ...]
) -> dict[tuple[str, ...], str] | None:
    """The hand-outs' lines' stems -> the hand-out's name, from the file; None when it cannot."""
    rows = _stored().get(rubric.question, {}).get("lines") if _ours(rubric, handouts) else None
    return None if rows is None else {tuple(stems): name for stems, name in rows}


def build(read_sentences: Callable, read_lines: Callable) -> dict:
    """A fresh reading of the snapshot by every rubric, as the file holds it (the readers are
    copies.py's, which reads the hand-outs through this module)."""
    handouts, rubrics = load_handouts(), {}
    for qid, rubric in load_rubrics().items():
        table: dict[tuple[str, str, int], int] = {}
        sentences = [
            [
                h,
                int(s.question),
                [
                    table.setdefault((t.word, t.stem, int(t.canonical)), len(table))
                    for t in s.tokens
                ],
            ]
            for h, s in read_sentences(rubric, handouts)
        ]
        lines = [[list(stems), name] for stems, name in read_lines(rubric, handouts).items()]
        rubrics[qid] = {"tokens": list(table), "sentences": sentences, "lines": lines}
    return {"key": key(), "rubrics": rubrics}


def write(read_sentences: Callable, read_lines: Callable) -> None:
    text = json.dumps(build(read_sentences, read_lines), separators=(",", ":")).encode()
    INDEX.write_bytes(gzip.compress(text, mtime=0))  # the same readings, the same bytes
