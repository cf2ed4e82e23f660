"""The class at a glance: `summary.md` and two PNG plots, built only from what grading wrote.

Reads `OUT/grades.csv` and `OUT/students/*/results.json` (docs/contract.md §5), so it works on any
grading output, whichever command produced it.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

from .questions import POINTS, QUESTION_IDS
from .report import read_grades_csv

MISCONCEPTION_TAG = "misconception:"


def _tests(out: Path, students: list[str]) -> dict[str, list]:
    """Each student's results.json tests (read once for every count below)."""
    found = {}
    for student in students:
        path = out / "students" / student / "results.json"
        try:
            tests = json.loads(path.read_text())["tests"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(tests, list):
            found[student] = [t for t in tests if isinstance(t, dict)]
    return found


def _misconceptions(tests_of: dict[str, list]) -> Counter:
    """How many students each misconception was seen in (once per student)."""
    seen: Counter = Counter()
    for tests in tests_of.values():
        tags = {
            t for test in tests for t in test.get("tags", []) if t.startswith(MISCONCEPTION_TAG)
        }
        seen.update(tag.removeprefix(MISCONCEPTION_TAG) for tag in tags)
    return seen


def _plot(totals: list[float], means: dict[str, float], plots: Path) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    plots.mkdir(parents=True, exist_ok=True)
    max_total = sum(POINTS.values())
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.hist(totals, bins=min(20, max(5, len(totals) // 3)), range=(0, max_total), color="#4c72b0")
    ax.set(xlabel=f"total score (of {max_total:g})", ylabel="students", title="Score distribution")
    fig.tight_layout()
    fig.savefig(plots / "score_histogram.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.8))
    ids = list(means)
    ax.bar(ids, [100 * means[q] / POINTS[q] for q in ids], color="#55a868")
    ax.set(ylabel="mean score (% of points)", ylim=(0, 100), title="Per-question means")
    plt.setp(ax.get_xticklabels(), rotation=50, ha="right", rotation_mode="anchor")
    fig.tight_layout()
    fig.savefig(plots / "question_means.png", dpi=100)
    plt.close(fig)
    return "plots/score_histogram.png", "plots/question_means.png"


def build_summary(out: Path, *, plots: bool = True) -> Path:
    """Write `out/summary.md` (and `out/plots/*.png`); return the summary's path."""
    out = Path(out)
    rows = read_grades_csv(out)
    students = [r["student"] for r in rows]
    totals = [float(r["total"]) for r in rows]
    max_total = sum(POINTS.values())
    lines = ["# Class summary", "", f"{len(rows)} submissions graded.", ""]
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

    lines += ["", "## Status", "", "| status | submissions |", "|---|---|"]
    for status, count in Counter(r["status"] for r in rows).most_common():
        lines.append(f"| {status} | {count} |")

    tests_of = _tests(out, students)
    seen = _misconceptions(tests_of)
    lines += ["", "## Misconceptions", ""]
    if seen:
        lines += ["| misconception | students | % of class |", "|---|---|---|"]
        for mid, count in seen.most_common():
            lines.append(f"| `{mid}` | {count} | {100 * count / len(rows):.0f}% |")
    else:
        lines.append("None diagnosed.")

    from .runinfo import layer_counts

    layers = layer_counts(out, students)
    lines += ["", "## Containment", ""]
    lines.append(
        "Student code ran in the sandbox layer "
        + ", ".join(f"`{layer}` ({count})" for layer, count in layers.most_common())
        + " (README, Containment: what each layer guarantees)."
    )

    review = [r["student"] for r in rows if r["needs_review"] == "true"]
    lines += ["", "## Needs review", ""]
    lines.append(", ".join(review) if review else "Nothing waits for a person's review.")
    lines += _reviews_line(tests_of)
    trouble = [f"{r['student']} ({r['status']})" for r in rows if r["status"] != "ok"]
    if trouble:
        lines += ["", "Submissions whose grading did not run cleanly: " + ", ".join(trouble) + "."]

    lines += _similar_section(out)

    if plots:
        hist, bars = _plot(totals, means, out / "plots")
        lines += [
            "",
            "## Plots",
            "",
            f"![score histogram]({hist})",
            "",
            f"![per-question means]({bars})",
        ]
    return _write(out, lines)


def _reviews_line(tests_of: dict[str, list]) -> list[str]:
    """How many questions wait for a person and how many a person decided (mha-grade review)."""
    from .reviewed import counts

    open_, decided, reopened = counts(tests_of)
    if not open_ and not decided:
        return []
    again = f" ({reopened} of them again, since the answer changed)" if reopened else ""
    line = f"Reviews: {open_} open{again}, {decided} decided by a person."
    if open_:
        line += " `mha-grade review OUT` goes through the open ones, worst first."
    return ["", line]


def _similar_section(out: Path, shown: int = 20) -> list[str]:
    """Pairs worth a look (similarity.json), or why there are none; nothing after `one`."""
    from . import runinfo, similarity

    data = similarity.read(out)
    if data is None:
        run = runinfo.read_run(out)
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
    rule = (
        f"each has at least {similarity.pct(data['threshold'])} of its own code in "
        "`multihead.py` and `crosscheck.py` in common with the other; the handed-out stubs and "
        f"code shared by more than {data['common_limit']} submissions are left out"
    )
    if not pairs:
        lines.append(f"No pair of the {data['students']} submissions is worth a look ({rule}).")
        return lines
    lines.append(
        f"{len(pairs)} pairs worth a look ({rule}); side by side, shared code highlighted, in "
        "[similarity.html](similarity.html). Similar code is a reason to read both, not "
        "evidence of copying."
    )
    lines += ["", "| pair | share of the first's code | of the second's |", "|---|---|---|"]
    for p in pairs[:shown]:
        share_a, share_b = similarity.pct(p["share_a"]), similarity.pct(p["share_b"])
        lines.append(f"| {p['a']} and {p['b']} | {share_a} | {share_b} |")
    if len(pairs) > shown:
        lines.append(f"\n{len(pairs) - shown} more in similarity.html.")
    return lines


def _write(out: Path, lines: list[str]) -> Path:
    path = out / "summary.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)  # atomic: a reader never sees half a summary
    return path
