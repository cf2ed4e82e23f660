"""`mha-grade export`: the grade sheet in each LMS's import format, matched through its roster.

Rosters are written the way each LMS exports its gradebook (Canvas: Student, ID, SIS User ID, SIS
Login ID, Section and a Points Possible row; Moodle: First name, Last name, ID number, Email
address; Blackboard Original: Last Name, First Name, Username, Student ID, every cell quoted).
"""

import csv
import io
from pathlib import Path

import pytest

from mha_grader import cli
from mha_grader.outputs import reports
from mha_grader.outputs.export import (
    BLACKBOARD,
    CANVAS,
    MOODLE,
    ExportError,
    build_export,
    read_roster,
)
from mha_grader.outputs.folder import OutputFolder


def row(student, total, status="ok", needs_review="false"):
    return {
        "student": student,
        "total": total,
        "max_total": "82",
        "status": status,
        "needs_review": needs_review,
    }


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Homework 1 (1001),Current Score
    Points Possible,,,,,10,(read only)
"Lovelace, Ada",101,S-1,ada,Sec A,9,90
"Babbage, Charles",102,S-2,cbabbage,Sec A,8,80
"Hopper, Grace",103,S-3,ghopper,Sec B,7,70
"Student, Test",999,,,Sec A,,
"""


def export(tmp_path, rows, roster_text, lms, **kw):
    header, roster = read_roster(write(tmp_path / "roster.csv", roster_text))
    result = build_export(rows, header, roster, lms, **kw)
    return result, list(csv.reader(io.StringIO(result.text)))


def test_canvas_file_has_identity_columns_then_the_assignment_and_a_points_possible_row(tmp_path):
    rows = [row("ada", "80"), row("cbabbage", "41.5")]
    result, table = export(tmp_path, rows, CANVAS_ROSTER, CANVAS, assignment="MHA lab")
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "MHA lab"]
    assert table[1] == ["    Points Possible", "", "", "", "", "82"]
    by_login = {r[3]: r[5] for r in table[2:]}
    assert by_login == {"ada": "80", "cbabbage": "41.5", "ghopper": ""}
    assert "Student, Test" not in result.text  # Canvas's Student View user is not a student
    assert result.unmatched == [] and result.missing == ["Hopper, Grace / 103 / S-3"]


def test_canvas_updates_an_existing_assignment_column_by_its_title_and_id(tmp_path):
    roster = CANVAS_ROSTER.replace("Homework 1 (1001)", "MHA lab (2002)")
    result, table = export(tmp_path, [row("ada", "80")], roster, CANVAS, assignment="mha lab")
    assert table[0][-1] == "MHA lab (2002)"


def test_missing_students_get_an_empty_cell_unless_zero_is_asked_for(tmp_path):
    _, table = export(tmp_path, [row("ada", "80")], CANVAS_ROSTER, CANVAS)
    assert [r[5] for r in table[2:]] == ["80", "", ""]
    _, table = export(tmp_path, [row("ada", "80")], CANVAS_ROSTER, CANVAS, missing_as_zero=True)
    assert [r[5] for r in table[2:]] == ["80", "0", "0"]


def test_ids_are_matched_by_login_then_sis_id_then_lms_id_then_email(tmp_path):
    roster = (
        "Student,ID,SIS User ID,SIS Login ID,Section,Email\n"
        '"A, One",1,x9,shared,S,one@uni.edu\n'
        '"B, Two",shared,x1,b2,S,shared@uni.edu\n'  # LMS id and email local part equal "shared"
        '"C, Three",3,103,c3,S,c3@uni.edu\n'
        '"D, Four",4,x4,d4,S,dee@uni.edu\n'
    )
    rows = [row("shared", "10"), row("103", "20"), row("dee", "30")]
    result, table = export(tmp_path, rows, roster, CANVAS)
    scores = {r[0]: r[-1] for r in table[2:]}
    assert scores == {"A, One": "10", "B, Two": "", "C, Three": "20", "D, Four": "30"}
    assert result.unmatched == [] and result.ambiguous == []


def test_roster_values_go_through_the_submission_id_rule_and_case_is_ignored(tmp_path):
    roster = 'Student,ID,SIS User ID,SIS Login ID,Section\n"Smith, J",7,,J. Smith,S\n'
    _, table = export(tmp_path, [row("j._smith", "12")], roster, CANVAS)  # the folder "J. Smith"
    assert table[2][-1] == "12"


def test_a_match_must_be_unique(tmp_path):
    roster = (
        "First name,Last name,ID number,Email address\n"
        "Ana,Lima,1,ana@uni-a.edu\nAna,Silva,2,ana@uni-b.edu\nBo,Chen,3,bo@uni-a.edu\n"
    )
    result, table = export(tmp_path, [row("ana", "50"), row("bo", "60")], roster, MOODLE)
    assert result.ambiguous == ["ana matches 2 roster rows"]
    assert [r[-1] for r in table[1:]] == ["", "", "60"]


def test_moodle_file_keeps_the_user_columns_and_emails_exactly_as_in_the_roster(tmp_path):
    roster = (
        "First name,Last name,ID number,Institution,Department,Email address,"
        "Assignment: Quiz (Real),Last downloaded from this course\n"
        "Ada,Lovelace,A-1,Uni,CS,Ada.Lovelace@Uni.edu,5,\nAlan,Turing,A-2,Uni,CS,alan@uni.edu,4,\n"
    )
    result, table = export(tmp_path, [row("Ada.Lovelace@Uni.edu", "70")], roster, MOODLE)
    assert table[0] == [
        "First name",
        "Last name",
        "ID number",
        "Institution",
        "Department",
        "Email address",
        "Multi-head attention",
    ]
    assert table[1][5] == "Ada.Lovelace@Uni.edu" and table[1][-1] == "70"
    assert table[2][-1] == ""


def test_blackboard_file_quotes_every_cell_and_updates_a_column_by_its_id(tmp_path):
    roster = (
        '"Last Name","First Name","Username","Student ID","Last Access","Availability",'
        '"MHA [Total Pts: 82 Score] |123456"\n'
        '"Lovelace","Ada","alovelace","1001","2026-01-01","Yes",""\n'
        '"Nobody","Some","","1002","","Yes",""\n'
    )
    result, table = export(tmp_path, [row("alovelace", "75")], roster, BLACKBOARD, assignment="MHA")
    assert table[0] == [
        "Last Name",
        "First Name",
        "Username",
        "Student ID",
        "MHA [Total Pts: 82 Score] |123456",
    ]
    assert result.text.splitlines()[1] == '"Lovelace","Ada","alovelace","1001","75"'
    assert result.unusable == ["Nobody / Some / 1002"]  # Blackboard needs a Username


def test_grader_errors_are_left_empty_and_needs_review_is_exported(tmp_path):
    rows = [
        row("ada", "0", status="grader-error", needs_review="true"),
        row("ghopper", "60", needs_review="true"),
    ]
    result, table = export(tmp_path, rows, CANVAS_ROSTER, CANVAS)
    assert [r[-1] for r in table[2:]] == ["", "", "60"]
    assert result.grader_errors == ["ada"] and result.needs_review == ["ghopper"]
    assert "Lovelace, Ada / 101 / S-1" not in result.missing  # it has a submission


def test_cells_that_a_spreadsheet_would_run_as_formulas_are_neutralised(tmp_path):
    roster = 'Student,ID,SIS User ID,SIS Login ID,Section\n"=HYPERLINK(1)",5,,eve,+S\n'
    _, table = export(tmp_path, [row("eve", "3")], roster, CANVAS)
    assert table[2][0] == "'=HYPERLINK(1)" and table[2][4] == "'+S"
    assert reports.spreadsheet_safe("-1.5") == "-1.5"  # numbers stay numbers


def test_a_roster_from_another_lms_is_refused(tmp_path):
    roster = "First name,Last name,Email address\nAda,Lovelace,ada@uni.edu\n"
    with pytest.raises(ExportError, match="not a Canvas gradebook export"):
        export(tmp_path, [row("ada", "1")], roster, CANVAS)


def test_cli_lists_submissions_without_a_roster_row_and_exits_non_zero(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    OutputFolder(out).write_grades([row("ada", "80"), row("stranger", "50")])
    roster = write(tmp_path / "roster.csv", CANVAS_ROSTER)
    target = tmp_path / "canvas.csv"
    argv = ["export", str(out), "--lms", "canvas", "--roster", str(roster), "-o", str(target)]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "stranger" in err and "ada" not in err
    assert "80" in target.read_text()
    OutputFolder(out).write_grades([row("ada", "80")])
    assert cli.main(argv) == 0


def test_a_grader_error_whose_ungraded_questions_a_person_decided_is_exported(tmp_path):
    # mha-grade review clears needs_review once every question the grader failed on is decided
    rows = [row("ada", "70", status="grader-error", needs_review="false")]
    result, table = export(tmp_path, rows, CANVAS_ROSTER, CANVAS)
    assert "70" in [r[-1] for r in table[2:]]
    assert result.grader_errors == []


def test_cli_names_the_roster_students_without_a_submission(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    roster = write(tmp_path / "roster.csv", CANVAS_ROSTER)
    argv = ["export", str(out), "--lms", "canvas", "--roster", str(roster), "-o"]
    OutputFolder(out).write_grades([row("ada", "80"), row("cbabbage", "70")])
    assert cli.main([*argv, str(tmp_path / "one.csv")]) == 0
    said = capsys.readouterr().out
    assert (
        "1 roster student without a submission got an empty cell: Hopper, Grace / 103 / S-3" in said
    ), said
    OutputFolder(out).write_grades([row("ada", "80")])
    assert cli.main([*argv, str(tmp_path / "two.csv"), "--missing-as-zero"]) == 0
    said = capsys.readouterr().out
    assert (
        "2 roster students without a submission got 0: Babbage, Charles / 102 / S-2; "
        "Hopper, Grace / 103 / S-3" in said
    ), said
