"""The class at a glance: `summary.md` and two PNG plots, built only from what grading wrote.

Reads `OUT/grades.csv` and `OUT/students/*/results.json` (docs/contract.md §5), so it works on any
grading output, whichever command produced it.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from mha_check.questions import QUESTION_IDS, WRITTEN_QUESTIONS

from ..outcomes import Status, Tag
from ..points import POINTS
from . import similarity
from .containment import NOT_RUN, layer_counts
from .folder import OutputFolder, as_folder, write_atomic

MOST_FAILED = 3  # cases shown per question


def _tests(out: OutputFolder, students: list[str]) -> dict[str, list]:
    """Each student's results.json tests (read once for every count below)."""
    found = {}
    for student in students:
        data = out.read_results(student)
        tests = data.get("tests") if data is not None else None
        if isinstance(tests, list):
            found[student] = [t for t in tests if isinstance(t, dict)]
    return found


def _misconceptions(tests_of: dict[str, list]) -> Counter:
    """How many students each misconception was seen in (once per student)."""
    seen: Counter = Counter()
    for tests in tests_of.values():
        seen.update({mid for test in tests for mid in Tag.misconceptions(test.get("tags", []))})
    return seen


def review_counts(tests_of: Mapping[str, list]) -> tuple[int, int, int]:
    """(open, decided, reopened) review items in each student's results.json tests (what the
    reports say, whichever command wrote them)."""
    open_, decided, reopened = set(), set(), set()
    for student, tests in tests_of.items():
        for t in tests:
            tags = t.get("tags", [])
            item = (student, str(t.get("name", "")).split(":", 1)[0])
            if Tag.REVIEWED in tags:
                decided.add(item)
            elif Tag.NEEDS_REVIEW in tags:
                open_.add(item)
                if Tag.REOPENED in tags:
                    reopened.add(item)
    return len(open_), len(decided), len(reopened)


def _question(test: dict) -> str | None:
    """The question a results.json test belongs to: its name starts with the question id."""
    qid = str(test.get("name", "")).split(":", 1)[0].strip()
    return qid if qid in POINTS else None


def _lost(test: dict) -> bool:
    try:
        return float(test.get("score", 0)) < float(test.get("max_score", 0))
    except (TypeError, ValueError):
        return False


def _failed_most(tests_of: dict[str, list]) -> dict[str, list[tuple[str, int]]]:
    """Per question, the cases most students lost points on (each student counted once)."""
    lost: dict[str, Counter] = {q: Counter() for q in QUESTION_IDS}
    for tests in tests_of.values():
        for name in {str(t.get("name", "")) for t in tests if _lost(t)}:
            q = _question({"name": name})
            if q is not None:
                lost[q][name] += 1
    return {q: _ranked(c)[:MOST_FAILED] for q, c in lost.items() if c}


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    """Most first, ties by name: Counter.most_common breaks ties by insertion order, which
    here follows set iteration and so Python's per-process string hashing; a merge and a batch
    (or two runs of one batch) then listed tied cases differently."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _flagged(tests_of: dict[str, list], student: str) -> str:
    """What a flagged student's review needs: the written answers to read, then the rest."""
    qids = {
        q
        for t in tests_of.get(student, [])
        if Tag.NEEDS_REVIEW in (t.get("tags") or []) and (q := _question(t)) is not None
    }
    written = [q for q in WRITTEN_QUESTIONS if q in qids]
    other = [q for q in QUESTION_IDS if q in qids and q not in WRITTEN_QUESTIONS]
    parts = [f"read {', '.join(written)}"] if written else []
    parts += [f"check {', '.join(other)}"] if other else []
    return f"{student} ({'; '.join(parts)})" if parts else student


def _bin_width(max_total: float, n: int) -> float:
    """A bin per few points: the narrowest of 1, 2, 2.5, 5, 10 giving at most ~45 bins (and
    wider for a small class, where narrow bins hold one student each)."""
    most = 45 if n >= 40 else 20
    return next((w for w in (1, 2, 2.5, 5, 10) if max_total / w <= most), 20)


def _plot(totals: list[float], means: dict[str, float], out: OutputFolder) -> tuple[str, str]:
    """Draw both plots; returns their paths relative to the summary."""
    import matplotlib  # here: a second of import, for the commands that draw plots only

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    out.plots.mkdir(parents=True, exist_ok=True)
    max_total = sum(POINTS.values())
    fig, ax = plt.subplots(figsize=(6, 3.5))
    width = _bin_width(max_total, len(totals))
    edges = [i * width for i in range(int(max_total // width) + 1)]
    if edges[-1] < max_total:
        edges.append(max_total)
    ax.hist(totals, bins=edges, color="#4c72b0", edgecolor="white")
    ax.set(
        xlabel=f"total score (of {max_total:g}; a bar per {width:g} points)",
        ylabel="students",
        title="Score distribution",
    )
    fig.tight_layout()
    fig.savefig(out.histogram_png, dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.8))
    ids = list(means)
    shares = [100 * means[q] / POINTS[q] for q in ids]
    low = _axis_floor(shares)
    bars = ax.bar(ids, [v - low for v in shares], bottom=low, color="#55a868")
    ax.bar_label(bars, labels=[f"{v:.0f}" for v in shares], fontsize=8, padding=2)
    title = "Per-question means" + (f" (axis from {low:g}%)" if low else "")
    ax.set(ylabel="mean score (% of points)", ylim=(low, 100 + (100 - low) * 0.08), title=title)
    plt.setp(ax.get_xticklabels(), rotation=50, ha="right", rotation_mode="anchor")
    fig.tight_layout()
    fig.savefig(out.question_means_png, dpi=100)
    plt.close(fig)
    return out.HISTOGRAM, out.QUESTION_MEANS


def _axis_floor(shares: list[float]) -> float:
    """Where the per-question axis starts: below the lowest mean by a margin, on a multiple of
    5, so that a class scoring 79-100% shows its differences instead of a 0-100 axis."""
    lowest = min(shares, default=0.0)
    margin = max(5.0, (100 - lowest) * 0.25)
    return max(0.0, 5 * ((lowest - margin) // 5))


def build_summary(out: OutputFolder | str | Path, *, plots: bool = True) -> Path:
    """Write `out/summary.md` (and `out/plots/*.png`); return the summary's path."""
    out = as_folder(out)
    rows = out.read_grades()
    students = [r["student"] for r in rows]
    totals = [float(r["total"]) for r in rows]
    max_total = sum(POINTS.values())
    lines = ["# Class summary", "", f"{len(rows)} submissions graded.", ""]
    lines += _partial_lines(out)
    if not rows:
        return _write(out, lines)

    lines += ["## Scores", "", "| | points | % |", "|---|---|---|"]
    stats = {
        "mean": statistics.fmean(totals),
        "median": statistics.median(totals),
        "min": min(totals),
        "max": max(totals),
    }
    for name, value in stats.items():
        lines.append(f"| {name} | {value:.1f} / {max_total:g} | {100 * value / max_total:.0f}% |")
    if len(totals) > 1:
        lines.append(f"| std. dev. | {statistics.stdev(totals):.1f} | |")

    means = {q: statistics.fmean(float(r[q]) for r in rows) for q in QUESTION_IDS}
    full = {q: sum(float(r[q]) >= POINTS[q] for r in rows) for q in QUESTION_IDS}
    lines += ["", "## Per question", "", "| question | points | mean | full marks |"]
    lines.append("|---|---|---|---|")
    for q in QUESTION_IDS:
        share = f"{full[q]} ({100 * full[q] / len(rows):.0f}%)"
        lines.append(f"| {q} | {POINTS[q]:g} | {means[q]:.2f} | {share} |")

    tests_of = _tests(out, students)
    lines += ["", "## Cases failed most", ""]
    failed = _failed_most(tests_of)
    if failed:
        lines += ["| question | case | students who lost points |", "|---|---|---|"]
        for q in QUESTION_IDS:
            for name, count in failed.get(q, []):
                case = name.split(":", 1)[1].strip() if ":" in name else name
                lines.append(f"| {q} | {_cell(case)} | {count} ({100 * count / len(rows):.0f}%) |")
    else:
        lines.append("No case lost points.")

    lines += ["", "## Status", "", "| status | submissions |", "|---|---|"]
    for status, count in _ranked(Counter(r["status"] for r in rows)):
        lines.append(f"| {status} | {count} |")

    seen = _misconceptions(tests_of)
    lines += ["", "## Misconceptions", ""]
    if seen:
        lines += ["| misconception | students | % of class |", "|---|---|---|"]
        for mid, count in _ranked(seen):
            lines.append(f"| `{mid}` | {count} | {100 * count / len(rows):.0f}% |")
    else:
        lines.append(
            "None diagnosed: no catalogued mistake fits; 'Cases failed most' above and each "
            "student's feedback say what failed."
        )

    layers = layer_counts(out, students)
    not_run = layers.pop(NOT_RUN, 0)
    lines += ["", "## Containment", ""]
    if layers:
        lines.append(
            "Student code ran in the sandbox layer "
            + ", ".join(f"`{layer}` ({count})" for layer, count in _ranked(layers))
            + " (docs/containment.md, 'How student code runs': what each layer guarantees)."
        )
    if not_run:
        lines.append(f"{not_run} submission(s) were not run: refused before any code ran.")

    review = [r["student"] for r in rows if r["needs_review"] == "true"]
    lines += ["", "## Needs review", ""]
    if review:
        lines.append(", ".join(_flagged(tests_of, s) for s in review))
    else:
        lines.append("Nothing waits for a person's review.")
    lines += _reviews_line(tests_of)
    trouble = [f"{r['student']} ({r['status']})" for r in rows if r["status"] != Status.OK]
    if trouble:
        lines += ["", "Submissions whose grading did not run cleanly: " + ", ".join(trouble) + "."]

    lines += _similar_section(out)

    if plots:
        hist, bars = _plot(totals, means, out)
        lines += [
            "",
            "## Plots",
            "",
            f"![score histogram]({hist})",
            "",
            f"![per-question means]({bars})",
        ]
    return _write(out, lines)


def reviews_counted(open_: int, decided: int, reopened: int) -> str:
    """'2 open (1 of them again, since the answer changed), 3 decided by a person': open are the
    questions flagged for a person (or reopened) that nobody has decided; decided, those a person
    gave a score that still holds. ``summary.md`` and ``mha-grade review --list`` both say it."""
    again = f" ({reopened} of them again, since the answer changed)" if reopened else ""
    return f"{open_} open{again}, {decided} decided by a person"


def _reviews_line(tests_of: dict[str, list]) -> list[str]:
    """How many questions wait for a person and how many a person decided (mha-grade review)."""
    open_, decided, reopened = review_counts(tests_of)
    if not open_ and not decided:
        return []
    line = f"Reviews: {reviews_counted(open_, decided, reopened)}."
    if open_:
        line += " `mha-grade review OUT` goes through the open ones, worst first."
    return ["", line]


def _partial_lines(out: OutputFolder) -> list[str]:
    """After ``mha-grade merge --allow-partial``: what was left out, before any figure."""
    run = out.read_run()
    gaps = run.get("incomplete") if run else None
    if not gaps or not isinstance(gaps, list):
        return []
    return [
        "**Partial:** merged with `--allow-partial`; the students of these shards are not in "
        "the grade sheet, nor in any figure below:",
        "",
        *("- " + " ".join(str(g).split()) for g in gaps),
        "",
    ]


def _similar_section(out: OutputFolder, shown: int = 20) -> list[str]:
    """Pairs, groups and files worth a look (similarity.json), or why there are none; nothing
    after `one`."""
    data = similarity.read(out)
    if data is None:
        run = out.read_run()
        if run and run.get("shard"):
            return [
                "",
                "## Similar submissions",
                "",
                f"Not compared within one shard ({run['shard']}): `mha-grade merge` compares the "
                "whole class.",
            ]
        return []
    pairs = data["pairs"]
    lines = ["", "## Similar submissions", ""]
    contain = data.get("contain")
    rule = (
        f"each has at least {similarity.pct(data['threshold'])} of its own code in "
        "`multihead.py` and `crosscheck.py` in common with the other"
        + (f", or one has {similarity.pct(contain)} of its code in the other" if contain else "")
        + "; the handed-out stubs and "
        f"code shared by more than {data['common_limit']} submissions are left out"
    )
    groups = [g for g in data["groups"] if isinstance(g, dict)]
    flagged = [f for f in data["runtime_code"] if isinstance(f, dict)]
    if not pairs:
        lines.append(f"No pair of the {data['students']} submissions is worth a look ({rule}).")
    else:
        lines.append(
            f"{len(pairs)} pairs worth a look ({rule}); side by side, shared code highlighted, "
            "in [similarity.html](similarity.html). Similar code is a reason to read both, not "
            "evidence of copying."
        )
        lines += ["", "| pair | share of the first's code | of the second's |", "|---|---|---|"]
        for p in pairs[:shown]:
            share_a, share_b = similarity.pct(p["share_a"]), similarity.pct(p["share_b"])
            lines.append(f"| {_cell(p['a'])} and {_cell(p['b'])} | {share_a} | {share_b} |")
        if len(pairs) > shown:
            lines.append(f"\n{len(pairs) - shown} more in similarity.html.")
    same = [g for g in groups if g.get("kind") == "same"]
    shared = [g for g in groups if g.get("kind") == "shared"]
    if same:
        lines += [
            "",
            "**The same code** (names, comments, layout and the order of functions set aside), "
            "listed whatever the class size:",
            "",
            *(f"- {_names(g)}" for g in same[:shown]),
        ]
        if len(same) > shown:
            lines.append(f"- and {len(same) - shown} more groups in similarity.html")
    if shared:
        lines += [
            "",
            "**Code many submissions share**: each group is mostly code more than "
            f"{data['common_limit']} submissions hold, and each member has that share of its "
            "code in another member's (a leaked or published solution, the lecture's code, a "
            "tutorial):",
            "",
        ]
        for g in shared[:shown]:
            share = similarity.pct(float(g.get("share", 0)))
            lines.append(f"- {len(g.get('students', []))} submissions, {share}: {_names(g)}")
    if flagged:
        lines += [
            "",
            "**Code built at run time**: these files use what can build, load or reach code "
            "at run time (`exec`, `eval`, `compile`, `importlib`, a decoded blob, a coding "
            "declaration, a module beyond plain numerical code...), so what ran may not be "
            "what their text shows; read them. Where the grader could decode the code, it was "
            "compared too.",
            "",
        ]
        for f in flagged[:shown]:
            reasons = similarity.describe([str(r) for r in f.get("reasons", [])])
            who = f"{_plain(str(f.get('student')))}, {_plain(str(f.get('file')))}"
            lines.append(f"- {who}: {_plain(reasons)}")
        if len(flagged) > shown:
            lines.append(f"- and {len(flagged) - shown} more in similarity.html")
    return lines


def _names(group: dict) -> str:
    return _plain(similarity.names([str(s) for s in group.get("students", [])]))


def _plain(text: str) -> str:
    """Text as plain markdown: one line, markup characters escaped (``__x__`` is not bold)."""
    return re.sub(r"([\\`*_{}\[\]<>#|!])", r"\\\1", " ".join(text.split()))


def _cell(text: str) -> str:
    """A test name as a markdown table cell: no pipe or line break can split the row."""
    return " ".join(text.replace("|", "/").split())


def _write(out: OutputFolder, lines: list[str]) -> Path:
    write_atomic(out.summary_md, "\n".join(lines) + "\n")  # a reader never sees half of it
    return out.summary_md
