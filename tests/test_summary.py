"""summary.md is built from grades.csv and results.json alone, and counts what the class did."""

import csv
import json

from mha_grader.questions import MAX_TOTAL, POINTS, QUESTION_IDS
from mha_grader.summary import build_summary


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


def test_summary_records_the_sandbox_layer_each_submission_ran_in(tmp_path):
    write_output(tmp_path, {s: (1.0, "ok", "false", []) for s in ("ana", "ben", "cy")})
    for student, layer in (("ana", "uid"), ("ben", "uid"), ("cy", "namespaces")):
        path = tmp_path / "students" / student / "results.json"
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "extra_data": {"sandbox": layer}}))
    text = build_summary(tmp_path, plots=False).read_text()
    containment = text.split("## Containment")[1].split("##")[0]
    assert "`uid` (2), `namespaces` (1)" in containment
