"""summary.md is built from grades.csv and results.json alone, and counts what the class did."""

import csv
import json
import os
import subprocess
import sys

from mha_check.questions import QUESTION_IDS
from mha_grader.outputs.summary import build_summary
from mha_grader.points import MAX_TOTAL, POINTS


def write_output(out, students):
    """students: {id: (fraction of every question's points, status, needs_review, tags per test)}"""
    (out / "students").mkdir(parents=True)
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", *QUESTION_IDS, "total", "max_total", "status", "needs_review"])
        for sid, (frac, status, review, tags) in students.items():
            scores = [POINTS[q] * frac for q in QUESTION_IDS]
            w.writerow([sid, *scores, sum(scores), MAX_TOTAL, status, review])
            tests = [
                {"name": f"softmax: case {i}", "score": 0, "max_score": 1, "tags": t}
                for i, t in enumerate(tags)
            ]
            (out / "students" / sid).mkdir()
            (out / "students" / sid / "results.json").write_text(json.dumps({"tests": tests}))


def test_summary_counts_each_misconception_once_per_student(tmp_path):
    write_output(
        tmp_path,
        {
            "ana": (1.0, "ok", "false", [[]]),
            "ben": (0.5, "ok", "false", [["misconception:scale-missing"]] * 3),
            "cy": (0.25, "ok", "true", [["misconception:scale-missing"], ["needs-review"]]),
            "dee": (0.0, "timeout", "false", [["misconception:split-no-transpose"]]),
        },
    )
    text = build_summary(tmp_path, plots=False).read_text()
    assert "4 submissions graded." in text
    assert "| `scale-missing` | 2 | 50% |" in text
    assert "| `split-no-transpose` | 1 | 25% |" in text
    assert "needs-review" not in text.split("## Misconceptions")[1].split("## Needs review")[0]


def test_summary_lists_students_needing_review_and_failed_runs(tmp_path):
    write_output(
        tmp_path,
        {"ana": (1.0, "ok", "false", []), "cy": (0.5, "crashed", "true", [])},
    )
    text = build_summary(tmp_path, plots=False).read_text()
    review = text.split("## Needs review")[1]
    assert "cy" in review and "ana" not in review
    assert "cy (crashed)" in text
    assert "| ok | 1 |" in text and "| crashed | 1 |" in text


def test_summary_reports_per_question_means_and_full_marks(tmp_path):
    write_output(tmp_path, {"ana": (1.0, "ok", "false", []), "ben": (0.0, "ok", "false", [])})
    text = build_summary(tmp_path, plots=False).read_text()
    q = POINTS["attention"]
    assert f"| attention | {q:g} | {q / 2:.2f} | 1 (50%) |" in text
    assert f"| mean | {MAX_TOTAL / 2:.1f} / {MAX_TOTAL:g} | 50% |" in text


def test_summary_draws_histogram_and_question_means_as_png(tmp_path):
    write_output(tmp_path, {f"s{i}": (i / 9, "ok", "false", []) for i in range(10)})
    text = build_summary(tmp_path).read_text()
    for name in ("score_histogram.png", "question_means.png"):
        png = tmp_path / "plots" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"plots/{name}" in text


def test_summary_of_an_empty_class_says_so(tmp_path):
    write_output(tmp_path, {})
    assert "0 submissions graded." in build_summary(tmp_path).read_text()


def _containment(out, layers: dict[str, str]) -> str:
    """summary.md's Containment section for students graded in these layers."""
    write_output(out, {s: (1.0, "ok", "false", []) for s in layers})
    for student, layer in layers.items():
        path = out / "students" / student / "results.json"
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "extra_data": {"sandbox": layer}}))
    text = build_summary(out, plots=False).read_text()
    return text.split("## Containment")[1].split("##")[0]


def test_summary_records_the_sandbox_layer_each_submission_ran_in(tmp_path):
    containment = _containment(tmp_path, {"ana": "uid", "ben": "uid", "cy": "namespaces"})
    assert "`uid` (2), `namespaces` (1)" in containment


def test_summary_counts_a_refused_submission_as_not_run_rather_than_unknown(tmp_path):
    containment = _containment(tmp_path, {"ana": "uid", "ben": ""})
    assert "`uid` (1)" in containment
    assert "unknown" not in containment
    assert "1 submission(s) were not run" in containment


def write_tests(out, tests_of):
    """students: {id: [(test name, score, max_score, tags)]}; every question at full points."""
    (out / "students").mkdir(parents=True)
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", *QUESTION_IDS, "total", "max_total", "status", "needs_review"])
        for sid, tests in tests_of.items():
            review = any("needs-review" in t[3] for t in tests)
            w.writerow([sid, *POINTS.values(), MAX_TOTAL, MAX_TOTAL, "ok", str(review).lower()])
            rows = [{"name": n, "score": s, "max_score": m, "tags": t} for n, s, m, t in tests]
            (out / "students" / sid).mkdir()
            (out / "students" / sid / "results.json").write_text(json.dumps({"tests": rows}))


def test_summary_shows_per_question_the_cases_most_students_lost(tmp_path):
    lost, kept = ("attention: gated one head", 0, 1, []), ("attention: gated one head", 1, 1, [])
    write_tests(
        tmp_path,
        {
            "ana": [lost, ("attention: worked values", 0, 1, []), ("softmax: axis 0", 0, 2, [])],
            "ben": [lost, lost],  # one student counts once
            "cy": [kept, ("softmax: axis 0", 1, 2, [])],
        },
    )
    text = build_summary(tmp_path, plots=False).read_text()
    section = text.split("## Cases failed most")[1].split("## Status")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        "| softmax | axis 0 | 2 (67%) |",
        "| attention | gated one head | 2 (67%) |",
        "| attention | worked values | 1 (33%) |",
    ]


def test_summary_says_which_written_answers_each_flagged_student_needs_read(tmp_path):
    flag = ["needs-review"]
    write_tests(
        tmp_path,
        {
            "ana": [("q2: concepts", 2, 4, flag), ("q4: concepts", 3, 4, flag)],
            "ben": [("attention: reaches torch", 0, 1, flag), ("q1: concepts", 1, 4, [])],
            "cy": [("q3: concepts", 4, 4, [])],
        },
    )
    review = build_summary(tmp_path, plots=False).read_text().split("## Needs review")[1]
    assert "ana (read q2, q4)" in review
    assert "ben (check attention)" in review
    assert "cy" not in review.split("\n\n")[1]


def test_histogram_has_a_bin_per_few_points_and_the_question_axis_shows_differences():
    from mha_grader.outputs.summary import _axis_floor, _bin_width

    assert _bin_width(82, 200) == 2
    assert _bin_width(82, 10) == 5
    assert 50 <= _axis_floor([79.0, 90.0, 100.0]) <= 74  # not a 0-100 axis squeezing 79-100%
    assert _axis_floor([5.0, 100.0]) == 0


def test_plots_are_written(tmp_path):
    write_output(tmp_path, {"ana": (1.0, "ok", "false", []), "ben": (0.8, "ok", "false", [])})
    text = build_summary(tmp_path).read_text()
    assert "![score histogram](plots/score_histogram.png)" in text
    assert (tmp_path / "plots" / "score_histogram.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "question_means.png").stat().st_size > 1000


def test_ties_are_listed_by_name_whatever_the_processs_string_hashing(tmp_path):
    # A merge and the batch it should equal run in different processes, each with its own
    # string hash seed; set iteration order then differs, and ties must not follow it.
    names = ["attention: e", "attention: a", "attention: d", "attention: b", "attention: c"]
    tags = [[f"misconception:{m}"] for m in ("scale-missing", "mask-ignored", "no-softmax")]
    write_tests(
        tmp_path,
        {
            "ana": [(n, 0, 1, t) for n, t in zip(names, tags + [[], []], strict=True)],
            "ben": [(n, 0, 1, []) for n in names] + [("q1: x", 0, 1, t) for t in tags],
        },
    )
    script = "import sys; from pathlib import Path; "
    script += "from mha_grader.outputs.summary import build_summary; "
    script += "print(build_summary(Path(sys.argv[1]), plots=False).read_text())"
    texts = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        texts.add(done.stdout)
    assert len(texts) == 1
    (text,) = texts
    cases = text.split("## Cases failed most")[1].split("## Status")[0]
    assert [line.split(" | ")[1] for line in cases.splitlines() if "| attention |" in line] == [
        "a",
        "b",
        "c",
    ]
    seen = text.split("## Misconceptions")[1].split("##")[0]
    assert seen.index("mask-ignored") < seen.index("no-softmax") < seen.index("scale-missing")
