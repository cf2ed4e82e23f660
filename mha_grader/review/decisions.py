"""A person's decisions on a student's question, kept in ``OUT/reviews.toml`` (``mha-grade
review``), and what each decision judges.

A decision records who decided, when, the score, an optional note, the grader's score at the
time, and a hash of what was judged (``judged``): the visible answer for a written question
(whitespace ignored), the tokens Python reads in the file the function lives in for a code
question (``_program``: strings included, comments and layout that changes nothing ignored;
a question graded where both files are loaded, ``parameter_counts`` and ``crosscheck.py``'s,
covers both: ``code_files``). Grading keeps the same hashes in each student's seal, so a
decision holds while they match (``holds``);
``apply.py`` applies decisions to the reports, and a decision whose answer changed is moved to
``[reopened...]`` there.

Code hashes carry the rule they were made under (``CODE_RULE``). A decision on code judged
under the earlier rule (blank lines, comment-only lines and trailing spaces ignored, a rule
blind to such lines inside strings) holds once more where that rule still calls the code
unchanged and the code has nothing that rule could misread; ``apply.settle`` then keys it to
the current rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import math
import re
import tokenize
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mha_check.answers import parse_answers
from mha_check.questions import CODE_QUESTIONS, NUMPY_QUESTIONS, QUESTION_IDS, WRITTEN_QUESTIONS

from ..outputs.folder import OutputFolder, as_folder, write_atomic
from ..outputs.reports import points as points_text
from ..outputs.similarity import WATCHED_NAMES, watched_name
from ..points import POINTS

MAX_NOTE = 2000  # characters of a reviewer's note

Key = tuple[str, str]  # (student, question)


class ReviewsError(Exception):
    """reviews.toml cannot be used, or a decision cannot be made; the message says why."""


# -- what was judged -------------------------------------------------------------------------

CODE_RULE = "v2:"  # a code question's hash starts with this: made over the tokens Python reads
EARLIER = "@v1"  # in a seal, question + EARLIER: the earlier rule's hash, where it is safe


SHORT = 16  # hex digits an earlier grader kept of a judged hash (64 bits: see ``_digest``)


def _digest(*parts: str | None) -> str:
    """A whole SHA-256 of ``parts``: the rule is in the source, so with 64 bits (16 hex digits,
    as an earlier grader kept) a birthday search of about 2^32 hashes, offline, finds two files
    that one decision would hold on."""
    h = hashlib.sha256()
    for part in parts:
        h.update(b"\1missing" if part is None else part.encode("utf-8", "replace"))
        h.update(b"\0")
    return h.hexdigest()


def _same(have: str | None, judged: str) -> bool:
    """Whether the hash ``have`` is the hash ``judged``: equal, or, where one of them was cut to
    ``SHORT`` digits by an earlier grader (a decision, or a seal, written then), made under the
    same rule and agreeing on those digits (``apply.settle`` then keys the decision to the
    whole hash)."""
    if have is None:
        return False
    if have == judged:
        return True
    rule_a, _, a = have.rpartition(":")
    rule_b, _, b = judged.rpartition(":")
    return rule_a == rule_b and min(len(a), len(b)) == SHORT and a[:SHORT] == b[:SHORT]


_SKIPPED = {tokenize.COMMENT, tokenize.NL}
_ENDS = {tokenize.NEWLINE: "\1N", tokenize.DEDENT: "\1D", tokenize.ENDMARKER: "\1E"}
_WATCHED = WATCHED_NAMES | {"getattr"}
_BREAKS = {None, tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def _program(text: str | None) -> tuple[str | None, bool]:
    """What Python reads in ``text``, as one string: the file decoded as the interpreter decodes
    the file grading writes (its coding declaration honoured, ``\r\n`` and ``\r`` ending lines
    as ``\n`` does), then its tokens (``tokenize``): strings as written, a ``#`` inside one
    included; comments, blank lines and line breaks inside brackets left out; each logical
    line's indentation kept as written (a tab for spaces can make a TabError). A file that
    does not decode or tokenize is kept as its raw text, so that no change goes unseen.

    Also whether the earlier rule (``_program_v1``) could not have misread this code: no line
    of a string but a whole-statement string (a docstring), no backslash continuation, no
    coding declaration or lone ``\r``, and no name that reads code or constants at run time
    (``exec``, ``__doc__``, ``getattr``... ``similarity.watched_name``)."""
    if text is None:
        return None, True
    raw = "\0raw\0" + text
    try:
        source = importlib.util.decode_source(text.encode("utf-8", "surrogatepass"))
    except (SyntaxError, UnicodeError, LookupError, ValueError):
        return raw, False
    if "\0" in source:
        return raw, False
    newlines = text.replace("\r\n", "\n")
    safe = "\r" not in newlines and source == newlines
    safe = safe and not _COOKIE.search("\n".join(source.split("\n", 2)[:2]))
    # One part per token, "\0" between them (a source holding "\0" was kept raw above); the
    # structure tokens and each logical line's indentation start with characters no token
    # string starts with (a control character outside a string is an ERRORTOKEN).
    parts: list[str] = []
    emit = parts.append
    start = True  # the next token starts a logical line
    before, before_end = None, 0  # the previous token's kind and last row
    pending = False  # a multi-line string began a logical line: safe if it is the whole line
    try:
        for kind, string, (row, col), (end_row, _), line in tokenize.generate_tokens(
            io.StringIO(source).readline
        ):
            if kind in _SKIPPED:
                before, before_end = kind, end_row
                continue
            if kind == tokenize.ERRORTOKEN:
                return raw, False
            if safe:
                if pending and kind != tokenize.NEWLINE:
                    safe = False
                pending = False
                if before not in _BREAKS and row > before_end:
                    safe = False  # a backslash continuation
                if kind == tokenize.STRING and row != end_row:
                    pending = safe = start
                elif kind == tokenize.NAME and (string in _WATCHED or string[:2] == "__"):
                    safe = not watched_name(string)
            before, before_end = kind, end_row
            if kind in _ENDS:
                emit(_ENDS[kind])
                start = start or kind == tokenize.NEWLINE
            elif kind == tokenize.INDENT:
                emit("\1I" + string)
                start = True
            else:
                if start:
                    emit("\2" + line[:col])  # the logical line's indentation, as written
                    start = False
                emit(string)
    except (tokenize.TokenError, SyntaxError):
        return raw, False
    return "\0".join(parts), safe


_NOT_CODE = re.compile(r"^[ \t]*(?:#.*)?\r?$\n?", re.MULTILINE)  # a blank or comment-only line


def _program_v1(text: str | None) -> str | None:
    """The earlier rule: Python source without blank lines, comment-only lines and trailing
    spaces (blind to such lines inside strings: kept only to carry decisions made under it)."""
    if text is None:
        return None
    lines = _NOT_CODE.sub("", text.replace("\r\n", "\n")).split("\n")
    return "\n".join(line.rstrip() for line in lines)


def code_files(qid: str) -> tuple[str, ...]:
    """The student files whose code can change how a code question is graded: every file the
    worker grading it loads. The NumPy questions are graded where ``multihead.py`` alone is
    loaded; the others (``parameter_counts`` and ``crosscheck.py``'s) where ``crosscheck.py``
    is loaded too, after ``multihead.py``, and can rebind what ``multihead.py`` defines
    (``import multihead; multihead.parameter_counts = ...``)."""
    own = CODE_QUESTIONS[qid]
    if qid in NUMPY_QUESTIONS:
        return (own,)
    return (own, *(name for name in ("multihead.py", "crosscheck.py") if name != own))


def judged(files: Mapping[str, str]) -> dict:
    """What a decision on each question of this submission would judge: ``hashes`` (question
    id -> hash; for a code question whose files the earlier rule cannot misread, also question
    + EARLIER -> that rule's hash) and ``answers`` (written question id -> the visible answer,
    or None when there is no section). Kept in the seal."""
    text = files.get("answers.md")
    answers = parse_answers(text) if text is not None else dict.fromkeys(WRITTEN_QUESTIONS)
    programs, safe = {}, {}
    for name in ("multihead.py", "crosscheck.py"):
        programs[name], safe[name] = _program(files.get(name))
    hashes = {}
    for q in QUESTION_IDS:
        if q in WRITTEN_QUESTIONS:
            answer = answers.get(q)
            hashes[q] = _digest("answer", None if answer is None else " ".join(answer.split()))
            continue
        names = code_files(q)
        hashes[q] = CODE_RULE + _digest("code", *(programs[name] for name in names))
        if all(safe[name] for name in names):
            hashes[q + EARLIER] = _digest("code", *(_program_v1(files.get(n)) for n in names))
    return {"hashes": hashes, "answers": {q: answers.get(q) for q in WRITTEN_QUESTIONS}}


def holds(judged: str, hashes: Mapping[str, str], qid: str) -> bool:
    """Whether a decision that judged ``judged`` holds on what has these hashes (a seal's):
    the same hash (``_same``: one cut to 16 digits by an earlier grader agrees on those); or,
    for a decision on code made under the earlier rule, that rule's hash of code it cannot
    have misread (``judged``)."""
    if _same(hashes.get(qid), judged):
        return True
    earlier = hashes.get(qid + EARLIER)
    return qid in CODE_QUESTIONS and not judged.startswith(CODE_RULE) and _same(earlier, judged)


# -- the store -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    score: float
    judged: str  # hash of what was judged (``judged``)
    reviewer: str
    decided: datetime
    grader_score: float  # what the grader had given, for the record
    note: str = ""


@dataclass(frozen=True)
class Reopened:
    """A decision dropped because what it judged changed: the item is open again."""

    previous: Decision
    reopened: datetime


@dataclass
class Reviews:
    decisions: dict[Key, Decision] = field(default_factory=dict)
    reopened: dict[Key, Reopened] = field(default_factory=dict)

    def of(self, student: str) -> tuple[dict[str, Decision], dict[str, Reopened]]:
        """This student's decisions and reopened items, by question."""
        return (
            {q: d for (s, q), d in self.decisions.items() if s == student},
            {q: r for (s, q), r in self.reopened.items() if s == student},
        )

    def students(self) -> set[str]:
        return {s for s, _ in self.decisions} | {s for s, _ in self.reopened}


HEADER = """\
# Review decisions (mha-grade review). One table per student and question a person graded:
# [decision.<student>.<question>] with score, note, reviewer, decided (UTC), the grader's score
# and `judged`, a hash of the answer or code the decision is about. A decision is applied to
# grades.csv, results.json and feedback.md, and kept across reruns of the batch while that hash
# still matches; when the student's answer changes, it moves to [reopened...] and the item
# waits for a person again. Prefer `mha-grade review OUT --set/--clear` to editing by hand.
"""


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def check_score(qid: str, score: float) -> float:
    """A score a person may give on ``qid``: a finite number from 0 to the question's points."""
    if qid not in POINTS:
        raise ReviewsError(f"{qid!r} is not a question id (one of: {', '.join(QUESTION_IDS)})")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise ReviewsError(f"the score on {qid} must be a number, not {score!r}")
    if not 0 <= score <= POINTS[qid]:
        raise ReviewsError(
            f"the score on {qid} must be between 0 and {POINTS[qid]:g} (its points), not {score:g}"
        )
    return round(float(score), 4)


def parse_score(text: str, max_score: float) -> float:
    """A score as a person types it: ``3``, ``2.5``, ``2,5`` or ``3/4`` (out of the question's
    points). Raises ValueError with what was expected."""
    text = text.strip().replace(",", ".")
    expected = f"a number from 0 to {points_text(max_score)}"
    whole, _, over = text.partition("/")
    try:
        score = float(whole)
        if over and abs(float(over) - max_score) > 1e-9:
            raise ValueError(f"this question is out of {points_text(max_score)}, not {over}")
    except ValueError as e:
        if "out of" in str(e):
            raise
        raise ValueError(f"expected {expected}, not {text!r}") from None
    if not 0 <= score <= max_score:  # also refuses nan
        raise ValueError(f"expected {expected} (the question's points), not {text}")
    return score


def _decision(raw: object, where: str, qid: str) -> Decision:
    if not isinstance(raw, dict):
        raise ReviewsError(f"{where}: expected a table")
    try:
        score = check_score(qid, raw["score"])
        grader = raw.get("grader_score", 0.0)
        decision = Decision(
            score=score,
            judged=str(raw["judged"]),
            reviewer=str(raw.get("reviewer", "")),
            decided=raw.get("decided") or utc_now(),
            grader_score=float(grader) if isinstance(grader, int | float) else 0.0,
            note=str(raw.get("note", ""))[:MAX_NOTE],
        )
    except KeyError as e:
        raise ReviewsError(f"{where}: no {e.args[0]}") from None
    except ReviewsError as e:
        raise ReviewsError(f"{where}: {e}") from None
    if not isinstance(decision.decided, datetime):
        raise ReviewsError(f"{where}: decided must be a date and time")
    return decision


def _entries(data: dict, table: str) -> Iterator[tuple[Key, dict, str]]:
    section = data.get(table, {})
    if not isinstance(section, dict):
        raise ReviewsError(f"[{table}] must be a table of students")
    for student, questions in section.items():
        if not isinstance(questions, dict):
            raise ReviewsError(f"[{table}.{student}] must be a table of questions")
        for qid, raw in questions.items():
            if qid not in POINTS:
                raise ReviewsError(f"[{table}.{student}.{qid}]: {qid!r} is not a question id")
            yield (student, qid), raw, f"[{table}.{student}.{qid}]"


def parse(text: str) -> Reviews:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ReviewsError(f"not valid TOML ({e})") from None
    unknown = set(data) - {"decision", "reopened"}
    if unknown:
        raise ReviewsError(f"unknown tables {', '.join(sorted(unknown))}")
    reviews = Reviews()
    for key, raw, where in _entries(data, "decision"):
        reviews.decisions[key] = _decision(raw, where, key[1])
    for key, raw, where in _entries(data, "reopened"):
        if not isinstance(raw, dict) or not isinstance(raw.get("previous"), dict):
            raise ReviewsError(f"{where}: expected a table with a [previous] decision")
        when = raw.get("reopened")
        reviews.reopened[key] = Reopened(
            _decision(raw["previous"], where + ".previous", key[1]),
            when if isinstance(when, datetime) else utc_now(),
        )
    return reviews


def _table(d: Decision) -> dict:
    table = {"score": d.score, "note": d.note, "reviewer": d.reviewer, "decided": d.decided}
    return table | {"grader_score": d.grader_score, "judged": d.judged}


def dumps(reviews: Reviews) -> str:
    import tomli_w  # only writing reviews.toml needs it: the other commands run without it

    data: dict = {}
    for (student, qid), d in sorted(reviews.decisions.items(), key=_order):
        data.setdefault("decision", {}).setdefault(student, {})[qid] = _table(d)
    for (student, qid), r in sorted(reviews.reopened.items(), key=_order):
        entry = {"reopened": r.reopened, "previous": _table(r.previous)}
        data.setdefault("reopened", {}).setdefault(student, {})[qid] = entry
    return HEADER + ("\n" + tomli_w.dumps(data) if data else "")


def _order(item: tuple[Key, object]) -> tuple[str, int]:
    (student, qid), _ = item
    return student, QUESTION_IDS.index(qid)


def load(out: OutputFolder | str | Path) -> Reviews:
    """The decisions in ``out/reviews.toml`` (none when there is no such file)."""
    path = as_folder(out).reviews_toml
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Reviews()
    except (OSError, UnicodeDecodeError) as e:
        raise ReviewsError(f"{path}: cannot be read ({e})") from None
    try:
        return parse(text)
    except ReviewsError as e:
        raise ReviewsError(f"{path}: {e}") from None


def save(out: OutputFolder | str | Path, reviews: Reviews) -> None:
    write_atomic(as_folder(out).reviews_toml, dumps(reviews))


@contextlib.contextmanager
def locked(out: OutputFolder | str | Path) -> Iterator[None]:
    """Hold the output folder's review lock: a queue, a --set and a batch's last step each read,
    change and write reviews.toml and the reports under it, never two at once."""
    folder = as_folder(out)
    folder.root.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: the grader runs on Linux; nothing to lock with
        yield
        return
    with open(folder.review_lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def gather(out: OutputFolder | str | Path, folders: Iterable[OutputFolder | str | Path]) -> int:
    """Add the decisions made in other output folders (shards reviewed before a merge) to
    ``out``'s, where ``out`` has none on that question; returns how many were added."""
    with locked(out):
        reviews = load(out)
        added = 0
        for folder in folders:
            theirs = load(folder)
            for key, decision in theirs.decisions.items():
                if key not in reviews.decisions and key not in reviews.reopened:
                    reviews.decisions[key] = decision
                    added += 1
            for key, reopened in theirs.reopened.items():
                if key not in reviews.decisions and key not in reviews.reopened:
                    reviews.reopened[key] = reopened
                    added += 1
        if added:
            save(out, reviews)
    return added
