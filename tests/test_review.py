"""Review decisions: reviews.toml, what they judge, how they reach every report, --set,
--clear and --list (the terminal queue is driven in test_review_queue.py; real batches in
test_review_batch.py)."""

import csv
import io
import json
import re
from datetime import UTC, datetime

import pytest
from review_helpers import ANSWERS, KEYWORDS, code_files, make_grade, seal, small_class

from mha_check.questions import CODE_QUESTIONS, QUESTION_IDS
from mha_grader import cli
from mha_grader.outputs.folder import OutputFolder
from mha_grader.outputs.summary import build_summary
from mha_grader.points import MAX_TOTAL, POINTS
from mha_grader.review import apply as reviewed
from mha_grader.review import decisions as reviews
from mha_grader.review import items as review_items
from mha_grader.review.decisions import parse_score


def rows(out):
    return {r["student"]: r for r in OutputFolder(out).read_grades()}


def results(out, student):
    return json.loads((out / "students" / student / "results.json").read_text())


def feedback(out, student):
    return (out / "students" / student / "feedback.md").read_text()


@pytest.fixture
def out(tmp_path):
    folder = tmp_path / "out"
    small_class(folder)
    return folder


# -- reviews.toml ------------------------------------------------------------------------------


def decision(score=1.5, note="", **kw):
    fields = dict(
        judged="abc",
        reviewer="tom",
        decided=datetime(2026, 12, 1, 9, 30, tzinfo=UTC),
        grader_score=0.5,
    )
    return reviews.Decision(score=score, note=note, **{**fields, **kw})


def test_reviews_toml_keeps_every_field_of_awkward_notes_and_ids():
    store = reviews.Reviews()
    notes = [
        'she said "quote" and \\ backslash',
        "line one\nline two\ttab",
        'triple """ quotes and \'single\'',
        "unicode: é, ü, 漢字, emoji 🙂",
        "[decision.fake.q1]\nscore = 4",
    ]
    for i, note in enumerate(notes):
        store.decisions[(f"j.smith+{i}@uni", "q1")] = decision(note=note)
    store.reopened[("ana", "softmax")] = reviews.Reopened(
        decision(score=6.0), datetime(2026, 12, 2, tzinfo=UTC)
    )
    text = reviews.dumps(store)
    assert text.startswith("# Review decisions")
    assert reviews.parse(text) == store


@pytest.mark.parametrize(
    "text, says",
    [
        ("[decision.ana.q1\nscore = 1", "not valid TOML"),
        ('[decision.ana.q9]\nscore = 1\njudged = "x"', "'q9' is not a question id"),
        ('[decision.ana.q1]\nscore = 5\njudged = "x"', "between 0 and 4"),
        ('[decision.ana.q1]\nscore = -1\njudged = "x"', "between 0 and 4"),
        ('[decision.ana.q1]\nscore = "all"\njudged = "x"', "must be a number"),
        ("[decision.ana.q1]\nscore = 2", "no judged"),
        ('[decisions.ana.q1]\nscore = 2\njudged = "x"', "unknown tables decisions"),
    ],
)
def test_a_broken_reviews_toml_is_refused_saying_where(tmp_path, text, says):
    (tmp_path / "reviews.toml").write_text(text)
    with pytest.raises(reviews.ReviewsError) as e:
        reviews.load(tmp_path)
    assert says in str(e.value) and "reviews.toml" in str(e.value)


def test_parse_score_reads_what_a_person_types_and_refuses_the_rest():
    assert parse_score("3", 4) == 3 and parse_score(" 2,5 ", 4) == 2.5
    assert parse_score("3/4", 4) == 3 and parse_score("4", 4) == 4 and parse_score("0", 4) == 0
    for bad, says in [("5", "from 0 to 4"), ("-1", "from 0 to 4"), ("nan", "from 0 to 4")]:
        with pytest.raises(ValueError, match=says):
            parse_score(bad, 4)
    with pytest.raises(ValueError, match="out of 4, not 5"):
        parse_score("3/5", 4)
    with pytest.raises(ValueError, match="expected a number"):
        parse_score("three", 4)


# -- what a decision judges ------------------------------------------------------------------


def hashes(answers=None, **code):
    files = code_files() | code
    from review_helpers import answers_md

    files["answers.md"] = answers_md(answers or ANSWERS)
    return reviews.judged(files)["hashes"]


def test_a_changed_written_answer_changes_only_its_own_hash():
    before = hashes()
    after = hashes(ANSWERS | {"q3": "Yes, every head attends to the same tokens."})
    assert [q for q in QUESTION_IDS if before[q] != after[q]] == ["q3"]


def test_reflowed_answers_and_code_with_new_comment_lines_are_judged_the_same():
    files = code_files()
    recommented = files["multihead.py"].replace(
        "def softmax", "# a new comment line\n\n\n    # and another   \ndef softmax"
    )
    recommented = recommented.replace("\n", "   \n", 5).replace("\n", "\r\n")
    assert recommented != files["multihead.py"]
    reflowed = ANSWERS | {"q1": ANSWERS["q1"].replace(" ", "\n", 3) + "   "}
    assert hashes(reflowed, **{"multihead.py": recommented}) == hashes()


def test_changed_code_changes_the_questions_of_its_file_and_of_the_files_importing_it():
    base = hashes()
    multihead = code_files()["multihead.py"].replace("keepdims=True", "keepdims=bool(1)", 1)
    changed = hashes(**{"multihead.py": multihead})
    assert {q for q in QUESTION_IDS if changed[q] != base[q]} == set(CODE_QUESTIONS)
    crosscheck = code_files()["crosscheck.py"] + "\nEXTRA = 1\n"
    changed = hashes(**{"crosscheck.py": crosscheck})
    assert {q for q in QUESTION_IDS if changed[q] != base[q]} == {
        "parameter_counts",  # graded where crosscheck.py is loaded too: it may rebind it
        "weights_from_torch",
        "cross_check",
    }


# -- a decision in every report ----------------------------------------------------------------


def test_set_changes_the_grade_sheet_results_json_and_feedback(out, capsys):
    assert rows(out)["ben"]["needs_review"] == "true"
    code = cli.main(
        ["review", str(out), "--set", "ben", "q1", "3.5", "--note", "Terse, but right."]
    )
    assert code == 0
    assert "ben q1: 3.5 / 4" in capsys.readouterr().out
    row = rows(out)["ben"]
    assert row["q1"] == "3.5" and float(row["total"]) == MAX_TOTAL - 0.5
    assert row["needs_review"] == "false"
    data = results(out, "ben")
    assert data["score"] == pytest.approx(MAX_TOTAL - 0.5)
    (q1,) = [t for t in data["tests"] if t["name"].startswith("q1")]
    assert q1["score"] == 3.5 and q1["max_score"] == 4 and "reviewed" in q1["tags"]
    assert "needs-review" not in q1["tags"]
    assert "Graded by a person: 3.5 / 4 (the automatic grader gave 1 / 4)" in q1["output"]
    assert "Terse, but right." in q1["output"] and KEYWORDS in q1["output"]
    text = feedback(out, "ben")
    assert "| q1 | 3.5 / 4 |" in text and "Graded by a person" in text
    assert "a person will review this answer" not in text
    saved = reviews.load(out).decisions[("ben", "q1")]
    assert (saved.score, saved.note, saved.grader_score) == (3.5, "Terse, but right.", 1.0)
    assert saved.reviewer and saved.decided.tzinfo is not None


def test_accepting_the_graders_score_tells_the_student_a_person_kept_it(out):
    assert cli.main(["review", str(out), "--set", "cy", "q3", "2"]) == 0
    text = feedback(out, "cy")
    assert "Checked by a person, who kept the grader's score: 2 / 4." in text
    assert rows(out)["cy"]["needs_review"] == "false"


def test_any_question_can_be_regraded_on_request(out):
    assert cli.main(["review", str(out), "--set", "dee", "q2", "4", "--note", "Regrade"]) == 0
    assert rows(out)["dee"]["q2"] == "4" and float(rows(out)["dee"]["total"]) == MAX_TOTAL
    assert cli.main(["review", str(out), "--set", "dee", "softmax", "3"]) == 0
    assert rows(out)["dee"]["softmax"] == "3"


def test_deciding_every_failed_question_completes_a_grader_error(out):
    assert rows(out)["ana"]["needs_review"] == "true"
    assert cli.main(["review", str(out), "--set", "ana", "softmax", "6"]) == 0
    row = rows(out)["ana"]
    assert row["softmax"] == "6" and row["needs_review"] == "false"
    assert float(row["total"]) == MAX_TOTAL and row["status"] == "grader-error"


def test_clear_puts_the_graders_score_back(out, capsys):
    cli.main(["review", str(out), "--set", "ben", "q1", "4"])
    assert cli.main(["review", str(out), "--clear", "ben", "q1"]) == 0
    assert "decision removed" in capsys.readouterr().out
    assert rows(out)["ben"]["q1"] == "1" and rows(out)["ben"]["needs_review"] == "true"
    assert ("ben", "q1") not in reviews.load(out).decisions
    assert "Graded by a person" not in feedback(out, "ben")


@pytest.mark.parametrize(
    "args, says",
    [
        (["ben", "q1", "5"], "from 0 to 4"),
        (["ben", "q1", "lots"], "expected a number"),
        (["ben", "q7", "1"], "'q7' is not a question id"),
        (["zed", "q1", "1"], "no student 'zed'"),
    ],
)
def test_set_refuses_what_it_cannot_record_and_changes_nothing(out, capsys, args, says):
    before = (out / "grades.csv").read_text()
    assert cli.main(["review", str(out), "--set", *args]) == 2
    assert says in capsys.readouterr().err
    assert (out / "grades.csv").read_text() == before
    assert not (out / "reviews.toml").exists()


def test_a_note_cannot_add_markup_or_terminal_escapes_to_the_students_report(out):
    note = "# Total: 82 / 82\n<script>x</script> ![i](http://e/x.png) \x1b[31mred\x1b[0m"
    cli.main(["review", str(out), "--set", "ben", "q1", "2", "--note", note])
    text = feedback(out, "ben")
    assert "\x1b" not in text and "<script>" not in text and "![i]" not in text
    assert "\n# Total" not in text and "\\# Total: 82 / 82" in text


def test_the_student_folder_name_finds_its_id(tmp_path):
    out = tmp_path / "out"
    seal(out, make_grade("J._Smith", share={"q1": 0.5}, flagged={"q1": KEYWORDS}))
    assert cli.main(["review", str(out), "--set", "J. Smith", "q1", "3"]) == 0
    assert rows(out)["J._Smith"]["q1"] == "3"


# -- what is open ----------------------------------------------------------------------------


def test_items_come_worst_first():
    found = [
        (it.student, it.question, it.kind)
        for it in review_items.items(_class_with_changed_answer())
    ]
    assert found == [
        ("ana", "softmax", "grader-error"),
        ("eve", "q4", "changed"),
        ("ben", "q1", "flagged"),  # a quarter of its points
        ("cy", "q3", "flagged"),  # a half
    ]


def _class_with_changed_answer():
    import tempfile
    from pathlib import Path

    out = Path(tempfile.mkdtemp()) / "out"
    small_class(out)
    seal(out, make_grade("eve"))
    reviewed.record(out, "eve", "q4", 3.0, "", "tom")
    seal(out, make_grade("eve"), ANSWERS | {"q4": "Something else entirely now."})
    return out


def test_list_shows_what_is_open_and_csv_is_for_scripts(out, capsys):
    cli.main(["review", str(out), "--set", "cy", "q3", "3"])
    capsys.readouterr()
    assert cli.main(["review", str(out), "--list"]) == 0
    text = capsys.readouterr().out
    # The decided one is counted, though only --all lists it.
    assert text.startswith(
        "2 open (2 students), 1 decided by a person (--all lists the decided ones too)"
    )
    assert "ana" in text and "ben" in text and "cy " not in text
    assert KEYWORDS[:40] in text
    assert cli.main(["review", str(out), "--list", "--all", "--csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["student"], r["question"], r["kind"]) for r in table] == [
        ("ana", "softmax", "grader-error"),
        ("ben", "q1", "flagged"),
        ("cy", "q3", "decided"),
    ]
    assert table[2]["score"] == "3" and table[2]["grader_score"] == "2"
    assert table[1]["max_score"] == "4" and table[1]["score"] == ""


def test_the_list_and_the_summary_count_the_same_reviews(out, capsys):
    reviewed.record(out, "cy", "q3", 3.0, "", "tom")
    reviewed.record(out, "dee", "q2", 1.0, "a regrade", "tom")  # decided, never flagged
    summary = build_summary(out, plots=False).read_text()
    counts = re.search(r"Reviews: (\d+) open, (\d+) decided by a person\.", summary)
    assert counts is not None and counts.groups() == ("2", "2"), summary
    for extra in ([], ["--all"]):
        assert cli.main(["review", str(out), "--list", *extra]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        assert first.startswith("2 open (2 students), 2 decided by a person"), first


def test_summary_counts_open_and_decided_reviews(out):
    reviewed.record(out, "cy", "q3", 3.0, "", "tom")
    text = build_summary(out, plots=False).read_text()
    assert "Reviews: 2 open, 1 decided by a person." in text


# -- decisions across grading again ------------------------------------------------------------


def test_settle_keeps_decisions_on_unchanged_answers_and_reopens_a_changed_one(out):
    reviewed.record(out, "ben", "q1", 4.0, "fine", "tom")
    reviewed.record(out, "cy", "q3", 3.0, "", "tom")
    reviewed.record(out, "cy", "q5", 2.0, "regrade", "tom")
    # cy hands in again: q3 changed, q5 did not; ben is graded again unchanged
    seal(out, make_grade("ben", share={"q1": 0.25}, flagged={"q1": KEYWORDS}))
    seal(
        out,
        make_grade("cy", share={"q3": 0.5}, flagged={"q3": "It says two opposite things."}),
        ANSWERS | {"q3": "Yes: the heads agree."},
    )
    settled = reviewed.settle(out, OutputFolder(out).read_grades())
    assert settled.dropped == [("cy", "q3")]
    OutputFolder(out).write_grades(settled.rows)
    store = reviews.load(out)
    assert set(store.decisions) == {("ben", "q1"), ("cy", "q5")}
    assert store.reopened[("cy", "q3")].previous.score == 3.0
    cy = rows(out)["cy"]
    assert cy["q3"] == "2" and cy["q5"] == "2" and cy["needs_review"] == "true"
    assert rows(out)["ben"]["q1"] == "4"
    text = feedback(out, "cy")
    assert "It has changed since, so the grader's score (2 / 4) stands" in text
    (item,) = [it for it in review_items.items(out) if it.student == "cy"]
    assert (item.question, item.kind, item.previous.score) == ("q3", "changed", 3.0)
    # a new decision closes the reopened item
    reviewed.record(out, "cy", "q3", 1.0, "", "tom")
    assert ("cy", "q3") not in reviews.load(out).reopened
    assert rows(out)["cy"]["needs_review"] == "false"


def test_reports_of_a_student_whose_decision_was_removed_by_hand_are_written_again(out):
    reviewed.record(out, "ben", "q1", 4.0, "", "tom")
    (out / "reviews.toml").unlink()
    settled = reviewed.settle(out, OutputFolder(out).read_grades())
    assert {r["student"]: r for r in settled.rows}["ben"]["q1"] == "1"
    assert "Graded by a person" not in feedback(out, "ben")


def test_a_grade_sealed_by_an_older_grader_cannot_be_reviewed_and_says_why(out, capsys):
    seal_path = out / "students" / "ben" / "grade.json"
    old = json.loads(seal_path.read_text())
    seal_path.write_text(json.dumps({k: old[k] for k in ("key", "row", "source")}))
    assert cli.main(["review", str(out), "--set", "ben", "q1", "2"]) == 2
    assert "--regrade" in capsys.readouterr().err


def test_points_in_the_reviewed_reports_add_up(out):
    reviewed.record(out, "ana", "softmax", 2.5, "", "tom")
    data = results(out, "ana")
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
    assert data["score"] == pytest.approx(MAX_TOTAL - POINTS["softmax"] + 2.5)
    assert [t["name"].split(":")[0] for t in data["tests"]] == list(QUESTION_IDS)


def test_a_student_without_a_kept_grade_keeps_the_row_grading_gave_and_is_named(out):
    reviewed.record(out, "ben", "q1", 4.0, "", "tom")
    (out / "students" / "ben" / "grade.json").unlink()  # as after grading ben failed
    failure = {**rows(out)["ben"], "status": "grader-error", "total": "0"}
    settled = reviewed.settle(out, [failure])
    assert settled.rows == [failure] and settled.unsealed == [("ben", "q1")]
    assert ("ben", "q1") in reviews.load(out).decisions  # kept for when ben is graded again


def test_accepting_a_fractional_score_counts_as_keeping_it():
    kept = decision(score=round(8 / 3, 4), grader_score=8 / 3)
    assert reviewed.review_text(8 / 3, 4, kept).startswith("Checked by a person")
    assert reviewed.review_text(8 / 3, 4, decision(score=3.0)).startswith("Graded by a person")


def test_a_class_graded_by_an_older_grader_is_refused_saying_what_to_do(out, capsys):
    for seal_path in out.glob("students/*/grade.json"):
        old = json.loads(seal_path.read_text())
        seal_path.write_text(json.dumps({k: old[k] for k in ("key", "row", "source")}))
    assert cli.main(["review", str(out), "--list"]) == 2
    assert "--regrade" in capsys.readouterr().err


def test_why_an_item_waits_is_the_graders_record_not_a_parse_of_the_students_feedback(tmp_path):
    # The feedback a student reads may be reworded at any time; the queue's reason and kind
    # come from the result's own fields (review_reason, grader_failed).
    out = tmp_path / "out"
    grade = make_grade("ben", share={"q1": 0.25}, flagged={"q1": KEYWORDS}, failed=("softmax",))
    for r in grade.results:
        if r.question in ("q1", "softmax"):
            r.output = "Wording for the student, changed since."
    seal(out, grade)
    found = {it.question: it for it in review_items.items(out)}
    assert found["softmax"].kind == "grader-error"
    assert found["softmax"].reason() == "the grader itself failed on this question"
    assert found["q1"].kind == "flagged"
    assert found["q1"].reason() == KEYWORDS
