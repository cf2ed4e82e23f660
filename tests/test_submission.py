"""Loading a submission folder or zip: layout, limits, hostile names, encodings."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from mha_grader.grading import submission as sub_mod
from mha_grader.grading.submission import load_submission, student_id

FILES = {"multihead.py": "A = 1\n", "crosscheck.py": "B = 2\n", "answers.md": "## Q1\nyes\n"}


def make_folder(root: Path, files: dict[str, str | bytes] = FILES) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return root


def make_zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def test_files_at_the_top_of_a_folder_are_read(tmp_path):
    s = load_submission(make_folder(tmp_path / "ada"))
    assert s.student == "ada"
    assert s.files == FILES and s.problems == {}


def test_files_inside_one_sub_folder_are_read(tmp_path):
    s = load_submission(make_folder(tmp_path / "bob" / "exercises").parent)
    assert s.files == FILES


def test_files_spread_over_two_sub_folders_are_not_guessed(tmp_path):
    root = tmp_path / "eve"
    make_folder(root / "a", {"multihead.py": "A = 1\n"})
    make_folder(root / "b", {"crosscheck.py": "B = 2\n"})
    s = load_submission(root)
    assert s.files == {}
    assert any("more than one sub-folder" in n for n in s.notes)


def test_a_missing_file_is_recorded_with_a_message(tmp_path):
    files = {k: v for k, v in FILES.items() if k != "crosscheck.py"}
    s = load_submission(make_folder(tmp_path / "cy", files))
    assert set(s.files) == {"multihead.py", "answers.md"}
    assert s.problems["crosscheck.py"].kind == "missing"
    assert "crosscheck.py is missing" in s.problems["crosscheck.py"].message


def test_invalid_utf8_is_a_problem_naming_the_file_and_position(tmp_path):
    s = load_submission(make_folder(tmp_path / "di", {**FILES, "multihead.py": b"x = '\xff'\n"}))
    assert "multihead.py" not in s.files
    problem = s.problems["multihead.py"]
    assert problem.kind == "unreadable" and "UTF-8" in problem.message
    assert "position 5" in problem.message


def test_answers_with_invalid_utf8_are_still_read_with_a_note(tmp_path):
    answers = b"## Q1\n\nOne shared projection, caf\xe9 split into heads.\n"
    s = load_submission(make_folder(tmp_path / "la", {**FILES, "answers.md": answers}))
    assert "answers.md" not in s.problems
    assert "split into heads" in s.files["answers.md"]
    assert any("answers.md is not valid UTF-8" in note for note in s.notes)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    s = load_submission(make_folder(tmp_path / "bom", {**FILES, "answers.md": b"\xef\xbb\xbfhi"}))
    assert s.files["answers.md"] == "hi"


def test_a_symbolic_link_to_another_file_is_refused(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("SOLUTION = 42\n")
    root = make_folder(tmp_path / "lnk", {k: v for k, v in FILES.items() if k != "multihead.py"})
    os.symlink(secret, root / "multihead.py")
    s = load_submission(root)
    assert "multihead.py" not in s.files
    assert "symbolic link" in s.problems["multihead.py"].message


def test_a_symlinked_sub_folder_is_not_followed(tmp_path):
    outside = make_folder(tmp_path / "outside")
    root = tmp_path / "sym"
    root.mkdir()
    os.symlink(outside, root / "exercises")
    assert load_submission(root).files == {}


def test_an_oversized_file_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(sub_mod, "MAX_FILE_BYTES", 100)
    s = load_submission(make_folder(tmp_path / "big", {**FILES, "answers.md": "x" * 101}))
    assert s.problems["answers.md"].kind == "unreadable"


def test_a_zip_with_files_in_one_folder_is_read_in_memory(tmp_path):
    archive = make_zip(tmp_path / "zed.zip", {f"exercises/{k}": v for k, v in FILES.items()})
    s = load_submission(archive)
    assert s.student == "zed" and s.files == FILES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["zed.zip"]


def test_zip_members_with_absolute_or_climbing_paths_are_ignored(tmp_path):
    members = {
        "../multihead.py": "EVIL = 1\n",
        "/etc/crosscheck.py": "EVIL = 2\n",
        "sub/../../answers.md": "evil",
        "C:/answers.md": "evil",
        **FILES,
    }
    s = load_submission(make_zip(tmp_path / "trav.zip", members))
    assert s.files == FILES
    assert any("ignored" in n for n in s.notes)
    assert not (tmp_path.parent / "multihead.py").exists()


def test_a_zip_bomb_member_is_read_only_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sub_mod, "MAX_FILE_BYTES", 1000)
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("multihead.py", "#" * 10_000_000)
    s = load_submission(archive)
    assert s.problems["multihead.py"].kind == "unreadable"
    assert "larger than" in s.problems["multihead.py"].message


def test_a_file_that_is_not_a_zip_is_refused_with_a_note(tmp_path):
    archive = tmp_path / "broken.zip"
    archive.write_bytes(b"this is not a zip")
    s = load_submission(archive)
    assert s.files == {} and set(s.problems) == set(FILES)
    assert s.refused and any("not a valid zip archive" in n for n in s.notes)


def test_a_path_that_is_neither_folder_nor_zip_is_an_error_for_the_instructor(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_submission(tmp_path / "nowhere")


@pytest.mark.parametrize(
    "name, expected",
    [("ada", "ada"), ("ada.zip", "ada"), ("..zip", "unnamed"), ("a b:c", "a_b_c"), (".x", "x")],
)
def test_student_ids_are_safe_folder_names(name, expected):
    assert student_id(Path(name)) == expected


def test_the_digest_changes_when_a_file_changes(tmp_path):
    a = load_submission(make_folder(tmp_path / "one"))
    b = load_submission(make_folder(tmp_path / "two", {**FILES, "answers.md": "## Q1\nno\n"}))
    c = load_submission(make_folder(tmp_path / "three"))
    assert a.digest() != b.digest() and a.digest() == c.digest()
