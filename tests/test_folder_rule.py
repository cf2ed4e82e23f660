"""One submission folder rule for mha-check and the grader: both pick the same folder."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from mha_check.folder import find_student_folder, folder_note
from mha_grader.grading.submission import load_folder, load_zip

CODE = "def f():\n    return 1\n"

# layout -> (files, the folder both must choose: "" the top level, None none), the files graded
LAYOUTS = {
    "top level": ({"multihead.py": CODE, "sub/crosscheck.py": CODE}, "", {"multihead.py"}),
    "one sub-folder": (
        {"work/multihead.py": CODE, "work/answers.md": "x"},
        "work",
        {"multihead.py", "answers.md"},
    ),
    "two sub-folders": ({"a/multihead.py": CODE, "b/crosscheck.py": CODE}, None, set()),
    "a zip tool's folder beside one": (
        {"__MACOSX/multihead.py": CODE, "work/crosscheck.py": CODE},
        "work",
        {"crosscheck.py"},
    ),
    "nothing": ({"notes.txt": "x"}, None, set()),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _zip(root: Path, files: dict[str, str]) -> Path:
    path = root.with_suffix(".zip")
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.mark.parametrize("layout", LAYOUTS)
def test_mha_check_and_the_grader_choose_the_same_folder(tmp_path, layout):
    files, chosen, graded = LAYOUTS[layout]
    root = tmp_path / "alice"
    _write(root, files)

    assert find_student_folder(root) == (root if chosen is None else root / chosen)
    assert set(load_folder(root).files) == graded
    assert set(load_zip(_zip(root, files)).files) == graded


def test_files_in_two_sub_folders_are_named_as_the_reason_by_both(tmp_path):
    files, _, _ = LAYOUTS["two sub-folders"]
    root = tmp_path / "bob"
    _write(root, files)
    for sub in (load_folder(root), load_zip(_zip(root, files))):
        assert any("more than one sub-folder" in note for note in sub.notes)

    assert "more than one sub-folder" in (folder_note(root) or "")
    assert folder_note(root / "a") is None
