"""What a grade looks like in the reports (docs/contract.md §5): results.json, feedback.md and a
grades.csv row, as data and text. ``folder.OutputFolder`` writes them where they belong.

The reports show only what the tests wrote for the student, the submission-level notes and the
output printed while importing: no hidden inputs, expected values or test source. Every text in
``feedback.md`` and ``results.json`` passes the one door for what students see, ``shown`` (both
are Markdown: results.json declares ``md`` as Gradescope's output format).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping

from mha_check.questions import QUESTION_IDS, WRITTEN_QUESTIONS

from .. import shown
from ..outcomes import DIAGNOSIS_PREFIX, Grade, Status, Tag
from ..points import POINTS

CSV_COLUMNS: tuple[str, ...] = (
    "student",
    *QUESTION_IDS,
    "total",
    "max_total",
    "status",
    "needs_review",
)


def points(x: float) -> str:
    """Points as a short decimal: 6, 0.6667, 79.5."""
    return f"{round(float(x), 4):g}"


def summary_lines(grade: Grade) -> list[str]:
    """The submission-level messages, for the top of every report."""
    lines = [f"Total: {points(grade.total)} / {points(grade.max_total)}"]
    if grade.status != Status.OK:
        lines.append(f"Status: {grade.status}")
    lines += [f"- {shown.for_report(note)}" for note in grade.notes]
    return lines


def results_json(grade: Grade) -> dict:
    """Gradescope's results format; test names start with their question id."""
    output = "  \n".join(summary_lines(grade))
    if grade.output:
        output += "\n\nWhat your code printed while being imported:\n\n"
        output += shown.code_block(grade.output)
    return {
        "score": round(sum(r.score for r in grade.results), 6),
        "output": output,
        "output_format": "md",
        "test_output_format": "md",
        "stdout_visibility": "visible",
        "tests": [
            {
                "name": r.name,
                "score": r.score,  # unrounded: the tests add up to the total
                "max_score": r.max_score,
                "output": shown.for_report(r.output),
                "visibility": r.visibility,
                "tags": list(r.tags),
            }
            for r in grade.results
        ],
        "extra_data": {
            "status": grade.status,
            "needs_review": grade.needs_review,
            "max_total": grade.max_total,
            "digest": grade.digest,
            "sandbox": grade.sandbox,  # the containment layer the code ran in
        },
    }


def _md(text: str) -> str:
    return shown.for_report(text).strip()


def feedback_md(grade: Grade) -> str:
    """The same as results.json, for a person to read."""
    scores = grade.scores()
    out = [f"# Feedback for {shown.escape(grade.student)}", ""]
    out += summary_lines(grade)
    out += ["", "| question | points |", "|---|---|"]
    for q in QUESTION_IDS:
        out.append(f"| {q} | {points(scores[q])} / {points(POINTS[q])} |")
    for q in QUESTION_IDS:
        cases = [r for r in grade.results if r.question == q]
        if not cases:
            continue
        kind = "written answer" if q in WRITTEN_QUESTIONS else "code"
        out += ["", f"## {q} ({kind}): {points(scores[q])} / {points(POINTS[q])}", ""]
        explained: set[str] = set()  # a question's diagnosis is spelled out once, then referred to
        for r in cases:
            mark = "passed" if r.passed else f"{points(r.score)} / {points(r.max_score)}"
            name = r.name.removeprefix(f"{q}: ") or r.name
            out.append(f"- **{_md(name)}**: {mark}")
            detail = _md(r.output)
            if r.passed:  # the mark says it already ("passed. Carried forward: ...")
                detail = detail.removeprefix("passed").removeprefix(".").strip()
            if detail:
                for line in detail.splitlines():
                    if line.startswith(DIAGNOSIS_PREFIX):
                        if line in explained:
                            line = f"{DIAGNOSIS_PREFIX}the same as above."
                        explained.add(line)
                    out.append(f"  {line}" if line else "")
            misc = Tag.misconceptions(r.tags)
            if misc:
                out.append(f"  (known mistake: {', '.join(misc)})")
            if r.needs_review:
                out.append("  (a person will review this answer)")
    if grade.output:
        out += ["", "## What your code printed while being imported", ""]
        out += [shown.code_block(grade.output)]
    return "\n".join(out) + "\n"


def grade_row(grade: Grade) -> dict[str, str]:
    """One grades.csv row."""
    scores = grade.scores()
    row = {"student": grade.student}
    row.update({q: points(scores[q]) for q in QUESTION_IDS})
    row.update(
        total=points(grade.total),
        max_total=points(grade.max_total),
        status=str(grade.status),
        needs_review="true" if grade.needs_review else "false",
    )
    return row


# A spreadsheet runs a cell that starts with one of these as a formula (or, with tab and CR,
# may shift it into another cell); a leading apostrophe makes it text, and is not displayed.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula: text starting with = + - @ or a tab or
    carriage return gets a leading apostrophe (numbers are left alone). Every CSV we write uses
    it (grades.csv, exports); ``csv_value`` reads it back."""
    value = str(value)
    if value.startswith(_FORMULA_START):
        try:
            float(value)
            return value
        except ValueError:
            return "'" + value
    return value


def csv_value(cell: str) -> str:
    """The value ``spreadsheet_safe`` wrote (the apostrophe it added removed)."""
    if cell.startswith("'") and cell[1:].startswith(_FORMULA_START):
        return cell[1:]
    return cell


def grades_csv(rows: Iterable[Mapping[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: spreadsheet_safe(row.get(k, "")) for k in CSV_COLUMNS})
    return buf.getvalue()
