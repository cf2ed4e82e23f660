"""Report writers: grades.csv, results.json (Gradescope) and feedback.md, written atomically."""

from __future__ import annotations

import csv
import json

import pytest

from mha_check.questions import QUESTION_IDS
from mha_grader.outcomes import Grade
from mha_grader.outcomes import TestResult as Result
from mha_grader.outputs import folder, reports
from mha_grader.outputs.folder import OutputFolder, write_atomic
from mha_grader.points import MAX_TOTAL, POINTS


def sample_grade() -> Grade:
    results = [
        Result("softmax: rows sum to 1", "softmax", 3.0, 3.0, "passed"),
        Result(
            "softmax: wrong axis",
            "softmax",
            0.0,
            3.0,
            "each column sums to 1, not each row",
            tags=["misconception:softmax-wrong-axis"],
        ),
        Result("q1: concepts", "q1", 1.0, 4.0, "mention the projections", tags=["needs-review"]),
    ]
    return Grade(
        "ada",
        results,
        status="timeout",
        notes=["ran out of time in: attention"],
        output="hello from import",
    )


def test_grades_csv_has_the_contract_columns_in_order(tmp_path):
    OutputFolder(tmp_path).write_grades([reports.grade_row(sample_grade())])
    with open(tmp_path / "grades.csv", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames == [
        "student",
        *QUESTION_IDS,
        "total",
        "max_total",
        "status",
        "needs_review",
    ]
    row = rows[0]
    assert row["student"] == "ada" and row["softmax"] == "3" and row["q1"] == "1"
    assert row["attention"] == "0" and row["total"] == "4"
    assert row["max_total"] == reports.points(MAX_TOTAL)
    assert row["status"] == "timeout" and row["needs_review"] == "true"


def test_results_json_follows_gradescopes_format(tmp_path):
    folder = OutputFolder(tmp_path).write_reports(sample_grade())
    data = json.loads((folder / "results.json").read_text())
    assert data["score"] == 4.0
    assert {"name", "score", "max_score", "output", "visibility", "tags"} <= set(data["tests"][0])
    assert all(t["name"].split(":")[0] in QUESTION_IDS for t in data["tests"])
    assert sum(t["score"] for t in data["tests"]) == data["score"]
    assert data["tests"][1]["tags"] == ["misconception:softmax-wrong-axis"]
    assert "ran out of time in: attention" in data["output"]
    assert "hello from import" in data["output"]
    assert data["extra_data"]["status"] == "timeout"


def test_feedback_shows_points_per_question_and_what_went_wrong(tmp_path):
    folder = OutputFolder(tmp_path).write_reports(sample_grade())
    text = (folder / "feedback.md").read_text()
    assert f"| softmax | 3 / {reports.points(POINTS['softmax'])} |" in text
    assert "each column sums to 1, not each row" in text
    assert "known mistake: softmax-wrong-axis" in text
    assert "a person will review this answer" in text
    assert "ran out of time in: attention" in text
    assert "hello from import" in text


def test_feedback_keeps_student_output_inside_its_code_block(tmp_path):
    grade = sample_grade()
    grade.output = "```\n# Forged heading\n```"
    text = reports.feedback_md(grade)
    block = text.split("````text\n", 1)[1]  # a fence longer than any inside: CommonMark's rule
    assert block.count("````") == 1  # only the closing fence: the student cannot close it
    assert block.index("````") > block.index("# Forged heading")


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path, monkeypatch):
    target = tmp_path / "grades.csv"
    write_atomic(target, "old\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(folder.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]  # no temporary left behind


@pytest.mark.parametrize("value, text", [(6.0, "6"), (2 / 3, "0.6667"), (79.5, "79.5"), (0, "0")])
def test_points_are_written_as_short_decimals(value, text):
    assert reports.points(value) == text


def test_feedback_spells_out_a_questions_diagnosis_once_and_refers_back_to_it():
    diagnosis = "Diagnosis: your split_heads reshapes without moving the head axis."
    results = [
        Result(f"split_heads: case {i}", "split_heads", 0.0, 2.0, f"wrong values\n{diagnosis}")
        for i in range(3)
    ]
    results.append(Result("merge_heads: case", "merge_heads", 0.0, 4.0, f"off\n{diagnosis}"))
    text = reports.feedback_md(Grade("bo", results))
    split, merge = text.split("## merge_heads")
    assert split.count(diagnosis) == 1
    assert split.count("Diagnosis: the same as above.") == 2
    assert merge.count(diagnosis) == 1  # another question explains its own
    data = reports.results_json(Grade("bo", results))
    assert all(diagnosis in t["output"] for t in data["tests"])  # each test stands alone there
