"""Review decisions in the reports: a grade with decisions applied, the seals it is made from,
and the step after grading that keeps decisions in force (``settle``) or records a new one
(``record``).

Every student's seal (``grade.json``) keeps the grade as graded and what a review would judge,
so reports are written again without grading again: ``results.json``, ``feedback.md`` and the
``grades.csv`` row are the grade with every decision applied (the question's cases become one
result "graded by a person", with the person's score and the grader's findings below the text
the student reads). After a batch, a merge or ``one``, a decision whose hash no longer matches
what was graded (the student handed in a changed answer) is dropped and kept as reopened: the
question is flagged for review again until a person decides it anew.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mha_check.questions import QUESTION_IDS

from ..outcomes import DIAGNOSIS_PREFIX, Grade, Tag, TestResult
from ..outputs import reports
from ..outputs.folder import OutputFolder, Seal, as_folder
from ..points import POINTS
from .decisions import (
    MAX_NOTE,
    Decision,
    Key,
    Reopened,
    Reviews,
    ReviewsError,
    check_score,
    holds,
    load,
    locked,
    save,
    utc_now,
)

REVIEWED = Tag.REVIEWED  # tag of a question a person graded
REOPENED = Tag.REOPENED  # tag of a question whose decision was dropped: changed since


# -- what the student reads --------------------------------------------------------------------

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def review_text(grader_score: float, max_score: float, decision: Decision | None) -> str:
    """What a student reads about a person's review of one question: the decision and its note,
    or (None) that a decision on an earlier version of the answer was dropped. The one place
    this text is made, and the only text of a review that reaches a student."""
    pts = reports.points
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
    return "passed" if r.passed else f"{reports.points(r.score)} / {reports.points(r.max_score)}"


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
    tags = [REVIEWED] + [t for r in cases for t in r.tags if t.startswith(Tag.MISCONCEPTION)]
    return TestResult(
        f"{qid}: graded by a person",
        qid,
        decision.score,
        POINTS[qid],
        "\n".join(lines).rstrip(),
        tags=list(dict.fromkeys(tags)),
    )


def _mark_total(score: float, qid: str) -> str:
    return f"{reports.points(score)} / {reports.points(POINTS[qid])}"


def _reopened(qid: str, cases: list[TestResult]) -> list[TestResult]:
    grader = sum(r.score for r in cases)
    text = review_text(grader, POINTS[qid], None)
    out = []
    for i, r in enumerate(cases):
        tags = list(dict.fromkeys([*r.tags, Tag.NEEDS_REVIEW, REOPENED]))
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


def read_sealed(out: OutputFolder, student: str) -> Seal | None:
    """The student's seal with the grade it kept; None when there is none, or it is from a
    version of the grader that did not keep the grade (grade those students again: --regrade)."""
    seal = out.read_seal(student)
    return seal if seal is not None and seal.grade is not None else None


def _carries_review(out: OutputFolder, student: str) -> bool:
    """Whether the student's results.json shows a decision or a reopened item (a look for the
    tags' text first: this runs for the whole class after every batch)."""
    text = out.read_results_text(student)
    if text is None or (f'"{REVIEWED}"' not in text and f'"{REOPENED}"' not in text):
        return False
    data = out.read_results(student)
    try:
        tests = data["tests"] if data is not None else []
        return any(REVIEWED in t.get("tags", []) or REOPENED in t.get("tags", []) for t in tests)
    except (KeyError, TypeError, AttributeError):
        return False


def render(out: OutputFolder, sealed: Seal, reviews: Reviews) -> dict[str, str]:
    """Write the student's reports with their decisions applied; returns the grade-sheet row."""
    decisions, reopened = reviews.of(sealed.student)
    grade = apply(sealed.grade, decisions, reopened)
    out.write_reports(grade, if_changed=True)  # after a batch, most are as they were
    return reports.grade_row(grade)


@dataclass
class Settled:
    rows: list[dict[str, str]]
    dropped: list[Key] = field(default_factory=list)  # decisions whose answer changed
    carried: list[Key] = field(default_factory=list)  # decisions keyed again to today's rule
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
    holding = {q: d for q, d in decisions.items() if holds(d.judged, hashes, q)}
    reopened = dict(reopened) | {
        q: Reopened(d, utc_now()) for q, d in decisions.items() if q not in holding
    }
    return apply(grade, holding, reopened)


def stale(reviews: Reviews, sealed: Seal) -> list[str]:
    """The student's questions whose decision judged something else than what was graded."""
    decisions, _ = reviews.of(sealed.student)
    return [q for q, d in decisions.items() if not holds(d.judged, sealed.hashes, q)]


def settle(out: OutputFolder | str | Path, rows: Iterable[Mapping[str, str]]) -> Settled:
    """After grading (a batch, a merge, ``one``): drop the decisions whose answer changed (they
    become reopened items), write the reports of every student with a decision or a reopened
    item, and return the grade-sheet rows with the decisions in them."""
    out = as_folder(out)
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
                reviews.reopened[key] = Reopened(reviews.decisions.pop(key), utc_now())
                result.dropped.append(key)
                changed = True
            for q, d in reviews.of(student)[0].items():
                if d.judged != sealed.hashes.get(q):  # held under the earlier rule: once
                    reviews.decisions[(student, q)] = dataclasses.replace(
                        d, judged=sealed.hashes[q]
                    )
                    result.carried.append((student, q))
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
    if settled.carried:
        print(
            f"mha-grade {command}: {len(settled.carried)} review decision(s) on code made under "
            "the earlier rule for what a decision judges are kept, now keyed to the tokens "
            "Python reads (their code has nothing that rule could misread).",
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
    out: OutputFolder | str | Path,
    student: str,
    qid: str,
    score: float | None,
    note: str = "",
    reviewer: str = "",
) -> tuple[Decision | None, Decision | None, dict[str, str]]:
    """Decide ``qid`` of ``student`` (``score`` None: remove the decision, back to the grader's
    score). Writes reviews.toml, the student's reports and grade-sheet row. Returns the new
    decision, the one it replaced, and the student's row."""
    out = as_folder(out)
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
                decided=utc_now(),
                grader_score=round(grader, 4),
                note=" ".join(note.split())[:MAX_NOTE],
            )
            reviews.decisions[key] = decision
            reviews.reopened.pop(key, None)
        save(out, reviews)
        row = render(out, sealed, reviews)
        rows = out.read_grades()
        if any(r.get("student") == student for r in rows):
            rows = [row if r.get("student") == student else r for r in rows]
        else:
            rows.append(row)
        out.write_grades(rows)
    return decision, before, row


def _no_grade(out: OutputFolder, student: str) -> str:
    if not out.has_student(student):
        known = out.sealed_students()
        hint = f" (students there: {', '.join(known[:8])}{' …' if len(known) > 8 else ''})"
        return f"no student {student!r} in {out.root}" + (hint if known else "")
    return (
        f"no grade is kept for {student} in {out.root} (grading failed, or an older grader graded "
        "them, which did not keep what a review needs): grade again with --regrade, then review"
    )
