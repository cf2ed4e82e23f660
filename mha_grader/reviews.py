"""A person's decisions on a student's question, kept in ``OUT/reviews.toml``, and how they
reach the reports (``mha-grade review``; the queue and the command line are in ``review.py``).

A decision records who decided, when, the score, an optional note, the grader's score at the
time, and a hash of what was judged: the visible answer for a written question (whitespace
ignored), the file the function lives in for a code question (blank lines, comment-only lines
and trailing spaces ignored; ``crosscheck.py`` questions also cover ``multihead.py``, which it
may import). Grading keeps the same hashes, with the grade itself, in each student's seal
(``grade.json``), so reports can be written again without grading again:

- the reports (``results.json``, ``feedback.md``, the ``grades.csv`` row) are the grade with
  every decision applied: the question's cases become one result "graded by a person" with the
  person's score, the grader's findings kept below the student-facing text;
- after a batch or a merge, a decision whose hash no longer matches (the student handed in a
  changed answer) is dropped and kept as ``reopened``: the item is flagged for review again
  until a person decides it anew.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mha_check.answers import parse_answers

from . import report
from .batch import SEAL
from .engine import GRADER_FAILED, Grade
from .questions import CODE_QUESTIONS, POINTS, QUESTION_IDS, WRITTEN_QUESTIONS
from .results import DIAGNOSIS_PREFIX, TestResult
from .written.grade import NEEDS_REVIEW

REVIEWS_FILE = "reviews.toml"
REVIEWED = "reviewed"  # tag of a question a person graded
REOPENED = "review-reopened"  # tag of a question whose decision was dropped: changed since
MAX_NOTE = 2000  # characters of a reviewer's note

Key = tuple[str, str]  # (student, question)


class ReviewsError(Exception):
    """reviews.toml cannot be used, or a decision cannot be made; the message says why."""


# -- what was judged -------------------------------------------------------------------------


def _digest(*parts: str | None) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(b"\1missing" if part is None else part.encode("utf-8", "replace"))
        h.update(b"\0")
    return h.hexdigest()[:16]


_NOT_CODE = re.compile(r"^[ \t]*(?:#.*)?\r?$\n?", re.MULTILINE)  # a blank or comment-only line


def _program(text: str | None) -> str | None:
    """Python source without blank lines, comment-only lines and trailing spaces: the same
    for code that only gained or lost such lines. (Cheap on purpose: it runs for every
    submission; parsing both files would add about 5% to a batch.)"""
    if text is None:
        return None
    lines = _NOT_CODE.sub("", text.replace("\r\n", "\n")).split("\n")
    return "\n".join(line.rstrip() for line in lines)


def code_files(qid: str) -> tuple[str, ...]:
    """The student files a code question's function depends on."""
    own = CODE_QUESTIONS[qid]
    return (own,) if own == "multihead.py" else (own, "multihead.py")


def judged(files: Mapping[str, str]) -> dict:
    """What a decision on each question of this submission would judge: ``hashes`` (question
    id -> hash) and ``answers`` (written question id -> the visible answer, or None when there
    is no section). Kept in the seal."""
    text = files.get("answers.md")
    answers = parse_answers(text) if text is not None else dict.fromkeys(WRITTEN_QUESTIONS)
    programs = {name: _program(files.get(name)) for name in ("multihead.py", "crosscheck.py")}
    hashes = {}
    for q in QUESTION_IDS:
        if q in WRITTEN_QUESTIONS:
            answer = answers.get(q)
            hashes[q] = _digest("answer", None if answer is None else " ".join(answer.split()))
        else:
            hashes[q] = _digest("code", *(programs[name] for name in code_files(q)))
    return {"hashes": hashes, "answers": {q: answers.get(q) for q in WRITTEN_QUESTIONS}}


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


def _now() -> datetime:
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
            decided=raw.get("decided") or _now(),
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
            when if isinstance(when, datetime) else _now(),
        )
    return reviews


def _table(d: Decision) -> dict:
    table = {"score": d.score, "note": d.note, "reviewer": d.reviewer, "decided": d.decided}
    return table | {"grader_score": d.grader_score, "judged": d.judged}


def dumps(reviews: Reviews) -> str:
    import tomli_w

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


def load(out: str | Path) -> Reviews:
    """The decisions in ``out/reviews.toml`` (none when there is no such file)."""
    path = Path(out) / REVIEWS_FILE
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


def save(out: str | Path, reviews: Reviews) -> None:
    report.atomic_write(Path(out) / REVIEWS_FILE, dumps(reviews))


@contextlib.contextmanager
def locked(out: str | Path) -> Iterator[None]:
    """Hold the output folder's review lock: a queue, a --set and a batch's last step each read,
    change and write reviews.toml and the reports under it, never two at once."""
    Path(out).mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: the grader runs on Linux; nothing to lock with
        yield
        return
    with open(Path(out) / ".reviews.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# -- what the student reads --------------------------------------------------------------------

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def review_text(grader_score: float, max_score: float, decision: Decision | None) -> str:
    """What a student reads about a person's review of one question: the decision and its note,
    or (None) that a decision on an earlier version of the answer was dropped. The one place
    this text is made, and the only text of a review that reaches a student."""
    pts = report.points
    if decision is None:
        return (
            "A person had graded an earlier version of this answer. It has changed since, so "
            f"the grader's score ({pts(grader_score)} / {pts(max_score)}) stands until a person "
            "looks at it again."
        )
    if abs(decision.score - grader_score) < 5e-5:  # scores are kept to 4 decimals
        line = f"Checked by a person, who kept the grader's score: {pts(decision.score)} / "
        line += f"{pts(max_score)}."
    else:
        line = f"Graded by a person: {pts(decision.score)} / {pts(max_score)} (the automatic "
        line += f"grader gave {pts(grader_score)} / {pts(max_score)})."
    note = " ".join(_CONTROL.sub(" ", decision.note).split())
    if note:
        # the reviewer's words, as plain text: no markup, headings or links of their own
        note = re.sub(r"([\\`*_{}\[\]<>#|!])", r"\\\1", note)
        line += f"\nThe reviewer's note: {note}"
    return line


# -- applying decisions to a grade -----------------------------------------------------------


def _mark(r: TestResult) -> str:
    return "passed" if r.passed else f"{report.points(r.score)} / {report.points(r.max_score)}"


def _reviewed(qid: str, cases: list[TestResult], decision: Decision) -> TestResult:
    grader = sum(r.score for r in cases)
    lines = [review_text(grader, POINTS[qid], decision), ""]
    lines.append(f"What the automatic grader found ({_mark_total(grader, qid)}):")
    explained: set[str] = set()  # a diagnosis is spelled out once, as in the grader's report
    for r in cases:
        name = r.name.removeprefix(f"{qid}: ") or r.name
        lines.append(f"- {name}: {_mark(r)}")
        output = r.output.strip()
        if r.passed and output == "passed":
            continue
        for line in output.splitlines():
            if line.startswith(DIAGNOSIS_PREFIX):
                line = f"{DIAGNOSIS_PREFIX}the same as above." if line in explained else line
                explained.add(line)
            lines.append(f"  {line}" if line else "")
    tags = [REVIEWED] + [t for r in cases for t in r.tags if t.startswith("misconception:")]
    return TestResult(
        f"{qid}: graded by a person",
        qid,
        decision.score,
        POINTS[qid],
        "\n".join(lines).rstrip(),
        tags=list(dict.fromkeys(tags)),
    )


def _mark_total(score: float, qid: str) -> str:
    return f"{report.points(score)} / {report.points(POINTS[qid])}"


def _reopened(qid: str, cases: list[TestResult]) -> list[TestResult]:
    grader = sum(r.score for r in cases)
    text = review_text(grader, POINTS[qid], None)
    out = []
    for i, r in enumerate(cases):
        tags = list(dict.fromkeys([*r.tags, NEEDS_REVIEW, REOPENED]))
        output = f"{r.output.rstrip()}\n{text}".strip() if i == 0 else r.output
        out.append(dataclasses.replace(r, tags=tags, output=output))
    return out


def apply(
    grade: Grade,
    decisions: Mapping[str, Decision],
    reopened: Mapping[str, Reopened] | None = None,
) -> Grade:
    """The grade with a person's decisions in it (a new Grade; ``grade`` is left as it is)."""
    reopened = reopened or {}
    if not decisions and not reopened:
        return grade
    results: list[TestResult] = []
    done: set[str] = set()
    for r in grade.results:
        q = r.question
        if q in done:
            continue
        if q in decisions:
            cases = [c for c in grade.results if c.question == q]
            results.append(_reviewed(q, cases, decisions[q]))
            done.add(q)
        elif q in reopened:
            results += _reopened(q, [c for c in grade.results if c.question == q])
            done.add(q)
        else:
            results.append(r)
    for q in decisions.keys() - done:  # a question the grade has no result for
        results.append(_reviewed(q, [], decisions[q]))
    order = {q: i for i, q in enumerate(QUESTION_IDS)}
    results.sort(key=lambda r: order.get(r.question, len(order)))
    return dataclasses.replace(grade, results=results)


# -- seals -----------------------------------------------------------------------------------


@dataclass
class Sealed:
    """What grading kept of one student: the grade as graded and what it judged."""

    student: str
    grade: Grade
    hashes: dict[str, str]
    answers: dict[str, str | None]
    source: str


def read_sealed(out: str | Path, student: str) -> Sealed | None:
    """The student's seal as grading wrote it; None when there is none, or it is from a version
    of the grader that did not keep the grade (grade those students again: --regrade)."""
    try:
        seal = json.loads((report.student_dir(out, student) / SEAL).read_text())
        grade = report.grade_from_dict(seal["grade"])
        hashes = dict(seal["judged"]["hashes"])
        answers = dict(seal["judged"]["answers"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if grade.student != student:
        return None
    return Sealed(student, grade, hashes, answers, str(seal.get("source", "")))


def seal_students(out: str | Path) -> list[str]:
    folder = Path(out) / "students"
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob(f"*/{SEAL}"))


def _carries_review(out: Path, student: str) -> bool:
    """Whether the student's results.json shows a decision or a reopened item (a look for the
    tags' text first: this runs for the whole class after every batch)."""
    try:
        text = (report.student_dir(out, student) / "results.json").read_text()
        if f'"{REVIEWED}"' not in text and f'"{REOPENED}"' not in text:
            return False
        tests = json.loads(text)["tests"]
        return any(REVIEWED in t.get("tags", []) or REOPENED in t.get("tags", []) for t in tests)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def render(out: str | Path, sealed: Sealed, reviews: Reviews) -> dict[str, str]:
    """Write the student's reports with their decisions applied; returns the grade-sheet row."""
    decisions, reopened = reviews.of(sealed.student)
    grade = apply(sealed.grade, decisions, reopened)
    report.write_student(out, grade, if_changed=True)  # after a batch, most are as they were
    return report.grade_row(grade)


@dataclass
class Settled:
    rows: list[dict[str, str]]
    dropped: list[Key] = field(default_factory=list)  # decisions whose answer changed
    unsealed: list[Key] = field(default_factory=list)  # decisions on a student with no grade kept


def as_graded(
    grade: Grade,
    hashes: Mapping[str, str],
    decisions: Mapping[str, Decision],
    reopened: Mapping[str, Reopened],
) -> Grade:
    """A freshly graded submission with the decisions on it applied: those on a question whose
    hash changed count as reopened, as ``settle`` will record them (so the reports written
    while grading are already the final ones)."""
    holding = {q: d for q, d in decisions.items() if hashes.get(q) == d.judged}
    reopened = dict(reopened) | {
        q: Reopened(d, _now()) for q, d in decisions.items() if q not in holding
    }
    return apply(grade, holding, reopened)


def stale(reviews: Reviews, sealed: Sealed) -> list[str]:
    """The student's questions whose decision judged something else than what was graded."""
    decisions, _ = reviews.of(sealed.student)
    return [q for q, d in decisions.items() if sealed.hashes.get(q) != d.judged]


def settle(out: str | Path, rows: Iterable[Mapping[str, str]]) -> Settled:
    """After grading (a batch, a merge, ``one``): drop the decisions whose answer changed (they
    become reopened items), write the reports of every student with a decision or a reopened
    item, and return the grade-sheet rows with the decisions in them."""
    out = Path(out)
    rows = [dict(r) for r in rows]
    with locked(out):
        reviews = load(out)
        result = Settled(rows)
        changed = False
        with_entries = reviews.students()
        for i, row in enumerate(rows):
            student = row.get("student", "")
            if student not in with_entries and not _carries_review(out, student):
                continue
            sealed = read_sealed(out, student)
            if sealed is None:
                result.unsealed += [k for k in reviews.decisions if k[0] == student]
                continue
            for q in stale(reviews, sealed):
                key = (student, q)
                reviews.reopened[key] = Reopened(reviews.decisions.pop(key), _now())
                result.dropped.append(key)
                changed = True
            rows[i] = render(out, sealed, reviews)
        if changed:
            save(out, reviews)
    return result


def report_settled(settled: Settled, command: str) -> None:
    """Tell the instructor what settling did (stderr: it is about the decisions, not grades)."""
    if settled.dropped:
        which = ", ".join(f"{s} {q}" for s, q in settled.dropped)
        print(
            f"mha-grade {command}: {len(settled.dropped)} review decision(s) dropped, since the "
            f"answer changed: {which}. They wait for a person again (mha-grade review).",
            file=sys.stderr,
        )
    if settled.unsealed:
        which = ", ".join(f"{s} {q}" for s, q in settled.unsealed)
        print(
            f"mha-grade {command}: review decisions not applied to {which}: no grade is kept "
            "for them (grading failed, or an older grader graded them); grade them again "
            "(--regrade) to apply them.",
            file=sys.stderr,
        )


def record(
    out: str | Path,
    student: str,
    qid: str,
    score: float | None,
    note: str = "",
    reviewer: str = "",
) -> tuple[Decision | None, Decision | None, dict[str, str]]:
    """Decide ``qid`` of ``student`` (``score`` None: remove the decision, back to the grader's
    score). Writes reviews.toml, the student's reports and grade-sheet row. Returns the new
    decision, the one it replaced, and the student's row."""
    out = Path(out)
    if qid not in POINTS:
        raise ReviewsError(f"{qid!r} is not a question id (one of: {', '.join(QUESTION_IDS)})")
    with locked(out):
        sealed = read_sealed(out, student)
        if sealed is None:
            raise ReviewsError(_no_grade(out, student))
        reviews = load(out)
        key = (student, qid)
        before = reviews.decisions.get(key)
        decision = None
        if score is None:
            reviews.decisions.pop(key, None)
        else:
            grader = sum(r.score for r in sealed.grade.results if r.question == qid)
            decision = Decision(
                score=check_score(qid, score),
                judged=sealed.hashes.get(qid, ""),
                reviewer=reviewer,
                decided=_now(),
                grader_score=round(grader, 4),
                note=" ".join(note.split())[:MAX_NOTE],
            )
            reviews.decisions[key] = decision
            reviews.reopened.pop(key, None)
        save(out, reviews)
        row = render(out, sealed, reviews)
        rows = report.read_grades_csv(out)
        if any(r.get("student") == student for r in rows):
            rows = [row if r.get("student") == student else r for r in rows]
        else:
            rows.append(row)
        report.write_grades_csv(out, rows)
    return decision, before, row


def _no_grade(out: Path, student: str) -> str:
    if not report.student_dir(out, student).is_dir():
        known = seal_students(out)
        hint = f" (students there: {', '.join(known[:8])}{' …' if len(known) > 8 else ''})"
        return f"no student {student!r} in {out}" + (hint if known else "")
    return (
        f"no grade is kept for {student} in {out} (grading failed, or an older grader graded "
        "them, which did not keep what a review needs): grade again with --regrade, then review"
    )


# -- items to review ---------------------------------------------------------------------------

GRADER_ERROR, CHANGED, FLAGGED, REQUESTED, DECIDED = (
    "grader-error",
    "changed",
    "flagged",
    "requested",
    "decided",
)
_RANK = {GRADER_ERROR: 0, CHANGED: 1, FLAGGED: 2, REQUESTED: 3, DECIDED: 4}


@dataclass
class Item:
    """One student's question, as a reviewer sees it."""

    student: str
    question: str
    kind: str  # GRADER_ERROR, CHANGED, FLAGGED, REQUESTED (asked for) or DECIDED
    cases: list[TestResult]  # the grader's results, as graded
    answer: str | None  # the visible written answer (written questions)
    source: str  # where the submission was read from
    decision: Decision | None = None
    previous: Decision | None = None  # a decision dropped since the answer changed

    @property
    def key(self) -> str:
        return f"{self.student}/{self.question}"

    @property
    def grader_score(self) -> float:
        return round(sum(r.score for r in self.cases), 4)

    @property
    def max_score(self) -> float:
        return POINTS[self.question]

    @property
    def open(self) -> bool:
        return self.decision is None

    def reason(self) -> str:
        """Why it is (or was) in the queue, in one line."""
        if self.kind == CHANGED and self.previous is not None:
            return (
                f"changed since {self.previous.reviewer or 'a person'} gave "
                f"{report.points(self.previous.score)} on {self.previous.decided:%Y-%m-%d}"
            )
        if any(r.output == GRADER_FAILED for r in self.cases):
            return "the grader itself failed on this question"
        for r in self.cases:
            if NEEDS_REVIEW in r.tags:  # the grader's flag is the last line of its output
                lines = [line.strip() for line in r.output.splitlines() if line.strip()]
                if lines:
                    first = re.split(r"(?<=[.!?])\s", lines[-1], maxsplit=1)[0]
                    return first if len(first) <= 120 else first[:119] + "…"
                return "flagged by the grader"
        return "asked for (not flagged by the grader)"


def order_key(item: Item) -> tuple:
    """Worst first: the grader's failures, answers changed since a decision, flagged answers,
    then questions asked for; within each, the lowest share of the question's points first,
    then the questions worth most."""
    share = item.grader_score / item.max_score if item.max_score else 0.0
    return (
        _RANK[item.kind],
        round(share, 4),
        -item.max_score,
        item.student,
        QUESTION_IDS.index(item.question),
    )


def _kind(cases: list[TestResult]) -> str | None:
    if any(r.output == GRADER_FAILED for r in cases):
        return GRADER_ERROR
    if any(NEEDS_REVIEW in r.tags for r in cases):
        return FLAGGED
    return None


def items(
    out: str | Path,
    reviews: Reviews | None = None,
    students: Iterable[str] | None = None,
    questions: Iterable[str] | None = None,
    decided: bool = False,
) -> list[Item]:
    """The items of a graded class, worst first: every flagged or reopened question (and, with
    ``decided``, every decided one). ``students``/``questions`` ask for those students'
    questions whether flagged or not (a regrade request)."""
    out = Path(out)
    reviews = load(out) if reviews is None else reviews
    asked = students is not None or questions is not None
    wanted_students = set(students) if students is not None else None
    wanted_questions = set(questions) if questions is not None else None
    found: list[Item] = []
    on_sheet = {r.get("student") for r in report.read_grades_csv(out)}
    for student in seal_students(out):
        if wanted_students is not None and student not in wanted_students:
            continue
        if on_sheet and student not in on_sheet:  # no longer in the class
            continue
        sealed = read_sealed(out, student)
        if sealed is None:
            continue
        decisions, reopened = reviews.of(student)
        for q in QUESTION_IDS:
            if wanted_questions is not None and q not in wanted_questions:
                continue
            cases = [r for r in sealed.grade.results if r.question == q]
            decision = decisions.get(q)
            previous = reopened[q].previous if q in reopened else None
            if decision is not None and sealed.hashes.get(q) != decision.judged:
                decision, previous = None, decision  # changed since: dropped at the next settle
            kind = CHANGED if previous is not None else _kind(cases)
            if decision is not None:
                if not (decided or asked):
                    continue
                kind = DECIDED
            elif kind is None:
                if not asked:
                    continue
                kind = REQUESTED
            found.append(
                Item(
                    student,
                    q,
                    kind,
                    cases,
                    sealed.answers.get(q) if q in WRITTEN_QUESTIONS else None,
                    sealed.source,
                    decision,
                    previous,
                )
            )
    return sorted(found, key=order_key)


def counts(tests_of: Mapping[str, list]) -> tuple[int, int, int]:
    """(open, decided, reopened) review items in each student's results.json tests (what the
    reports say, whichever command wrote them)."""
    open_, decided, reopened = set(), set(), set()
    for student, tests in tests_of.items():
        for t in tests:
            tags = t.get("tags", [])
            item = (student, str(t.get("name", "")).split(":", 1)[0])
            if REVIEWED in tags:
                decided.add(item)
            elif NEEDS_REVIEW in tags:
                open_.add(item)
                if REOPENED in tags:
                    reopened.add(item)
    return len(open_), len(decided), len(reopened)


def gather(out: str | Path, folders: Iterable[str | Path]) -> int:
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
