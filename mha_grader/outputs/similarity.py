"""Similar submissions: which pairs of a class share enough code to be worth a look.

The comparison is copydetect's (winnowing over tokens, MOSS's method; offline): every file is
reduced to its tokens with names replaced by ``V``, function names by ``F`` and strings by ``S``
(so renaming variables changes nothing), comments and layout dropped; every run of ``K``
characters of that reduced text is hashed; the hashes of the handed-out stubs are boilerplate
and never count; two files match where they share hashes, and copydetect turns the shared
hashes into matched stretches of each file (``compare_files``) and highlights them in the raw
code (``highlight_overlap``). Hashes are order-free, so reordering functions changes nothing.

Two things are done here rather than by copydetect, for speed and for reproducible reports:
the reduction to tokens uses one regular expression instead of pygments' Python lexer (which
costs ~25 ms a file, more than grading the whole submission; the reduced text has the same
text, see ``reduce_code``), and k-grams are hashed with a fixed polynomial hash (copydetect
uses Python's ``hash``, salted per process, so two runs would pick different fingerprints).
To keep a class of 1,000 linear, pairs are first screened by a sample of their fingerprints
(those whose hash is 0 modulo ``SAMPLE``); copydetect then compares only the screened pairs.
Code that more than ``common_limit`` submissions share is treated like the stubs: common
idioms (a max-shifted softmax) are not evidence of anything.

A flag means "look at this pair", never "these students copied": a study group, a tutorial or
the lecture's code are innocent reasons for shared code.
"""

from __future__ import annotations

import builtins
import copy
import functools
import html
import json
import keyword
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from ..paths import EXERCISES
from .folder import CODE_FILES, OutputFolder, as_folder, write_atomic

# Calibrated on independently written solutions (tests/test_similarity.py; the figures are in
# benchmarks/README.md): with copydetect's default K = 25 they share 50-60% of their code (this
# exercise's correct code converges); with 45 at most 48%, while renamed and reordered copies
# keep 78% or more.
K = 45  # copydetect's noise threshold: matches shorter than K reduced characters never count
SAMPLE = 8  # screening keeps fingerprints whose hash is 0 mod SAMPLE (about 1 in 8)
SCREEN = 0.8  # ... and passes pairs whose samples overlap by this share of the threshold
THRESHOLD = 0.65  # flagged: each of the two has at least this share of its own code in common
MIN_MATCH = 300  # ... and the shared code is at least this many reduced characters long
MAX_CHARS = 200_000  # longer files are compared on their first MAX_CHARS characters
SHOWN = 50  # pairs listed in the HTML report (the summary lists fewer)

# -- reducing code to tokens (copydetect's filter_code, without pygments) -----------------------

_TOKEN = re.compile(
    r"""
    (?P<drop>[ \t\f\r\n]+|\\\r?\n|\#[^\r\n]*)
   |(?P<string>[rRbBuUfF]{0,2}(?:
        '''(?:[^'\\]|\\.|'(?!''))*'''
       |\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
       |'(?:[^'\\\r\n]|\\.)*'
       |"(?:[^"\\\r\n]|\\.)*"))
   |(?P<name>[^\W\d]\w*)
   |(?P<number>0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
   |(?P<op>\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%@&|^~<>=!]=?|.)
    """,
    re.VERBOSE | re.DOTALL,
)
# Kept as written, as pygments' lexer keeps them: keywords, builtins (int, ValueError, range).
_LITERAL_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))
_PSEUDO_NAMES = frozenset({"self", "cls", "__file__", "__name__", "__doc__", "__spec__"})


def reduce_code(code: str) -> tuple[str, np.ndarray]:
    """copydetect's filtered text and offsets for Python code.

    Variables and attributes become ``V``, a name after ``def`` ``F``, after ``class`` ``O``, a
    string ``S``; keywords, builtins, numbers and operators stay; whitespace and comments go.
    The offsets are copydetect's: ``[index in the reduced text, characters removed before it]``,
    which ``compare_files`` uses to map matches back onto the raw code.
    """
    out: list[str] = []
    emit = out.append
    length = 0  # len("".join(out)), kept as we go
    at: list[int] = [0]  # copydetect's offsets, as two columns
    shift: list[int] = [0]
    removed = 0
    previous = ""
    importing = ""  # "module" while naming modules in an import (kept), "names" after from-import
    # findall gives each token as (drop, string, name, number, op): all in C, one tuple a token.
    for drop, string, name, number, op in _TOKEN.findall(code):
        if drop:
            at.append(length - 1)
            shift.append(removed)
            removed += len(drop)
            if "\n" in drop:
                importing = ""
            continue
        text = string or name or number or op
        letter = None
        if string:
            if text[0] in "'\"" and not text.startswith(("'''", '"""')):
                # A plain one-line string: pygments keeps its quotes, reduces what is inside.
                if len(text) == 2:
                    emit('""')
                    length += 2
                else:
                    out += ['"', "S", '"']
                    length += 3
                    at.append(length - 2)
                    shift.append(removed)
                    removed += len(text) - 3
                previous = text
                continue
            letter = "S"
        elif name and previous != "@" and name not in _PSEUDO_NAMES:
            # (decorators, self, __name__ stay as written, as pygments keeps them)
            if name in ("from", "import"):
                importing = "names" if name == "import" and importing == "module" else "module"
            elif previous == ".":
                letter = None if importing == "module" else "V"
            elif name not in _LITERAL_NAMES and importing != "module":
                letter = "F" if previous == "def" else "O" if previous == "class" else "V"
        previous = text
        if letter is None:
            emit(text)
            length += len(text)
        else:
            emit(letter)
            length += 1
            at.append(length - 1)
            shift.append(removed)
            removed += len(text) - 1
    return "".join(out), np.array([at, shift], dtype=np.int64).T


def kgram_hashes(text: str, k: int = K) -> np.ndarray:
    """A hash of every k-character window: polynomial mod 2**64, then splitmix64's mixer.
    Fixed (not salted per process), so every run of the grader picks the same fingerprints."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    base = np.uint64(1_000_003)
    for j in range(k):
        h = h * base + codes[j : j + n]
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h.view(np.int64)


@dataclass
class Fingerprint:
    """One file's fingerprints, with the attributes of copydetect's CodeFingerprint that its
    ``compare_files`` reads (``hashes``, ``hash_idx``, ``token_coverage``...)."""

    filename: str
    raw_code: str
    filtered_code: str
    offsets: np.ndarray
    kgrams: np.ndarray  # hash of the k-gram at each kept position
    positions: np.ndarray  # where each kept k-gram starts in filtered_code
    k: int = K

    def keep(self, mask: np.ndarray) -> None:
        self.kgrams, self.positions = self.kgrams[mask], self.positions[mask]
        for cached in ("_idx", "_unique", "_coverage"):
            self.__dict__.pop(cached, None)

    def drop(self, hashes: np.ndarray) -> None:
        """Forget the k-grams whose hash is in `hashes` (sorted, unique)."""
        if len(hashes) and len(self.kgrams):
            self.keep(~_member(self.kgrams, hashes))

    @property
    def unique(self) -> np.ndarray:
        """The kept hashes, sorted, each once."""
        if "_unique" not in self.__dict__:
            self.__dict__["_unique"] = np.unique(self.kgrams)
        return self.__dict__["_unique"]

    @property
    def hash_idx(self) -> dict[int, list[int]]:
        if "_idx" not in self.__dict__:
            idx: dict[int, list[int]] = {}
            for h, i in zip(self.kgrams.tolist(), self.positions.tolist(), strict=True):
                idx.setdefault(h, []).append(i)
            self.__dict__["_idx"] = idx
        return self.__dict__["_idx"]

    @property
    def hashes(self) -> set[int]:
        return set(self.hash_idx)

    @property
    def token_coverage(self) -> int:
        """Characters of filtered_code inside some kept k-gram (copydetect's get_token_coverage,
        vectorised)."""
        if "_coverage" not in self.__dict__:
            starts = self.positions  # distinct and rising
            ends = np.minimum(starts + self.k, len(self.filtered_code))
            # Union of [start, end) intervals: the ends rise with the starts (k is fixed), so
            # each interval adds what lies beyond the previous one's end.
            previous = np.concatenate([starts[:1], ends[:-1]])
            covered = np.sum(ends - np.minimum(np.maximum(starts, previous), ends))
            self.__dict__["_coverage"] = int(covered)
        return self.__dict__["_coverage"]


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """values in sorted_set, elementwise (a binary search: much faster than np.isin here)."""
    i = np.searchsorted(sorted_set, values).clip(max=len(sorted_set) - 1)
    return sorted_set[i] == values


def fingerprint(code: str, filename: str, boilerplate: np.ndarray | None = None) -> Fingerprint:
    """Every k-gram of the reduced code except the boilerplate's (copydetect with window 1)."""
    code = code[:MAX_CHARS]
    reduced, offsets = reduce_code(code)
    hashes = kgram_hashes(reduced)
    fp = Fingerprint(filename, code, reduced, offsets, hashes, np.arange(len(hashes)))
    if boilerplate is not None:
        fp.drop(boilerplate)
    return fp


def fingerprint_files(files: Mapping[str, str], student: str = "") -> dict[str, Fingerprint]:
    """Fingerprints of a submission's code files (the stubs' k-grams left out)."""
    boiler = stub_boilerplate()
    return {
        name: fingerprint(files[name], f"{student}/{name}", boiler[name])
        for name in CODE_FILES
        if files.get(name)
    }


@functools.cache
def stub_boilerplate() -> dict[str, np.ndarray]:
    """All k-gram hashes of the handed-out stubs, per file: code that every student starts from."""
    out = {}
    for name in CODE_FILES:
        try:
            reduced, _ = reduce_code((EXERCISES / name).read_text())
        except OSError:
            reduced = ""
        out[name] = np.unique(kgram_hashes(reduced))
    return out


# -- comparing a class -----------------------------------------------------------------------


@dataclass
class Pair:
    a: str
    b: str
    share_a: float  # share of a's own code (stubs excluded) also found in b
    share_b: float
    matched: int  # reduced characters in matched stretches (the smaller of the two sides)
    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> highlighted html

    @property
    def score(self) -> float:
        return min(self.share_a, self.share_b)


@dataclass
class Report:
    students: int
    pairs: list[Pair]  # flagged pairs, most similar first
    threshold: float = THRESHOLD
    common_limit: int = 0
    compared: int = 0  # pairs that copydetect compared after screening


def common_limit_for(students: int) -> int:
    """Code in more than this many submissions is common (never less than 10)."""
    return max(10, students // 20)


def compare(
    sources: Mapping[str, Mapping[str, str]],
    threshold: float = THRESHOLD,
    min_match: int = MIN_MATCH,
    common_limit: int | None = None,
    highlight: bool = True,
    given: Mapping[str, Mapping[str, Fingerprint]] | None = None,
) -> Report:
    """Flag every pair of students whose code files are mostly the same. `given` may hold
    fingerprints already made (by the grading processes) of some students' files."""
    from copydetect.detector import compare_files

    students = sorted(sources)
    limit = common_limit_for(len(students)) if common_limit is None else common_limit
    given = given or {}
    prints: dict[str, dict[str, Fingerprint]] = {}
    for s in students:
        # Fingerprints made while grading are used when they are of this very code.
        ready, todo = given.get(s) or {}, {}
        prints[s] = {}
        for name, code in sources[s].items():
            fp = ready.get(name)
            if fp is not None and fp.raw_code == code[:MAX_CHARS]:
                prints[s][name] = copy.copy(fp)  # (compare drops common code from its copy)
            else:
                todo[name] = code
        prints[s].update(fingerprint_files(todo, s))
    for name in CODE_FILES:
        docs = [prints[s][name] for s in students if name in prints[s]]
        if not docs:
            continue
        # How many submissions hold each hash; code in more than `limit` of them is common.
        values, counts = np.unique(np.concatenate([d.unique for d in docs]), return_counts=True)
        common = values[counts > limit]
        for d in docs:
            d.drop(common)

    candidates = _screen(students, prints, threshold)
    flagged: list[Pair] = []
    for a, b in candidates:
        matched = {a: 0.0, b: 0.0}
        covered = {a: 0.0, b: 0.0}
        slices = {}
        for name in CODE_FILES:
            fa, fb = prints[a].get(name), prints[b].get(name)
            for s, f in ((a, fa), (b, fb)):
                if f is not None:
                    covered[s] += f.token_coverage
            if fa is None or fb is None or not (fa.hashes & fb.hashes):
                continue
            _, (sim_a, sim_b), (sl_a, sl_b) = compare_files(fa, fb)
            matched[a] += sim_a * fa.token_coverage
            matched[b] += sim_b * fb.token_coverage
            slices[name] = (sl_a, sl_b)
        share_a = matched[a] / covered[a] if covered[a] else 0.0
        share_b = matched[b] / covered[b] if covered[b] else 0.0
        pair = Pair(a, b, share_a, share_b, int(min(matched.values())))
        if pair.score >= threshold and pair.matched >= min_match:
            if highlight:
                pair.files = _highlight(prints[a], prints[b], slices)
            flagged.append(pair)
    flagged.sort(key=lambda p: (-p.score, p.a, p.b))
    return Report(len(students), flagged, threshold, limit, len(candidates))


def _screen(
    students: list[str], prints: dict[str, dict[str, Fingerprint]], threshold: float
) -> list[tuple[str, str]]:
    """Pairs whose sampled fingerprints overlap enough that copydetect should compare them."""
    index: dict[tuple[str, int], list[str]] = {}
    size: Counter = Counter()
    for s in students:
        for name, fp in prints[s].items():
            sample = fp.unique[fp.unique % SAMPLE == 0].tolist()
            size[s] += len(sample)
            for h in sample:
                index.setdefault((name, h), []).append(s)
    shared: Counter = Counter()
    for holders in index.values():
        if len(holders) > 1:
            shared.update(combinations(holders, 2))
    # A share of the threshold: a sample of a hundred or more fingerprints is not that far off
    # (renamed and reordered copies sit 0.1 or more above the threshold).
    return sorted(
        (a, b)
        for (a, b), n in shared.items()
        if n >= 2 and n >= SCREEN * threshold * min(size[a], size[b])
    )


def _highlight(
    a: dict[str, Fingerprint], b: dict[str, Fingerprint], slices: dict
) -> dict[str, tuple[str, str]]:
    from copydetect.utils import highlight_overlap

    out = {}
    for name, (sl_a, sl_b) in slices.items():
        hl_a, _ = highlight_overlap(a[name].raw_code, sl_a, "<mark>", "</mark>", escape_html=True)
        hl_b, _ = highlight_overlap(b[name].raw_code, sl_b, "<mark>", "</mark>", escape_html=True)
        out[name] = (hl_a, hl_b)
    return out


# -- what it writes ------------------------------------------------------------------------------


def write(out: OutputFolder | str | Path, report: Report) -> None:
    """``similarity.json`` (for the summary) and ``similarity.html`` (side by side)."""
    out = as_folder(out)
    data = {
        "students": report.students,
        "threshold": report.threshold,
        "min_match": MIN_MATCH,
        "common_limit": report.common_limit,
        "pairs": [
            {"a": p.a, "b": p.b, "share_a": round(p.share_a, 4), "share_b": round(p.share_b, 4)}
            for p in report.pairs
        ],
    }
    write_atomic(out.similarity_json, json.dumps(data, indent=1) + "\n")
    write_atomic(out.similarity_html, render_html(report))


def read(out: OutputFolder | str | Path) -> dict | None:
    try:
        data = json.loads(as_folder(out).similarity_json.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pairs"), list) else None


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 110em; }
table.pair { width: 100%; table-layout: fixed; border-collapse: collapse; }
table.pair td { vertical-align: top; width: 50%; padding: 0 .5em; }
pre { font-size: 12px; background: #f6f6f6; padding: .5em; overflow-x: auto; }
mark { background: #ffd27a; }
.note { color: #444; }
"""


def render_html(report: Report) -> str:
    e = html.escape
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Similar submissions: pairs worth a look</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Similar submissions: pairs worth a look</h1>",
        '<p class="note">Each pair below shares at least '
        f"{pct(report.threshold)} of each student's own code in <code>multihead.py</code> and "
        "<code>crosscheck.py</code> (the handed-out stubs, and code that more than "
        f"{report.common_limit} submissions share, are left out; renamed variables and "
        "reordered functions still match). Shared code is highlighted. Similar code is a "
        "reason to read both submissions, not evidence of copying: students may have worked "
        "from the same tutorial, the lecture's code or a study group. Talk to the students "
        "before concluding anything.</p>",
        f"<p>{report.students} submissions compared; {len(report.pairs)} pairs worth a look.</p>",
    ]
    for p in report.pairs[:SHOWN]:
        lines.append(
            f"<h2>{e(p.a)} and {e(p.b)}</h2><p>{pct(p.share_a)} of {e(p.a)}'s code and "
            f"{pct(p.share_b)} of {e(p.b)}'s code in common.</p>"
        )
        for name, (hl_a, hl_b) in p.files.items():
            lines += [
                f"<h3>{e(name)}</h3>",
                '<table class="pair"><tr>',
                f"<td><b>{e(p.a)}</b><pre>{hl_a}</pre></td>",
                f"<td><b>{e(p.b)}</b><pre>{hl_b}</pre></td>",
                "</tr></table>",
            ]
    if len(report.pairs) > SHOWN:
        rest = len(report.pairs) - SHOWN
        lines.append(f"<p>{rest} more pairs are listed in similarity.json.</p>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"
