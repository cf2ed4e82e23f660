"""The student bundle: it works on its own and leaks nothing. (The Gradescope autograder's tests
are in test_gradescope.py.)"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mha_check.questions import QUESTION_IDS
from mha_grader.handouts.bundle import BUNDLE_DIR, build_bundle

ROOT = Path(__file__).resolve().parent.parent
FILES = ("multihead.py", "crosscheck.py", "answers.md")


def significant_lines(paths):
    """Lines long enough to be telling (a shared `import numpy as np` proves nothing)."""
    return {
        line.strip()
        for p in paths
        if p.suffix != ".png"
        for line in p.read_text().splitlines()
        if len(line.strip()) > 24
    }


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bundle")
    path = build_bundle(tmp / "student.zip")
    with zipfile.ZipFile(path) as zf:
        zf.extractall(tmp / "unzipped")
    return path, tmp / "unzipped" / BUNDLE_DIR


def run_check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "mha_check", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_bundle_holds_stubs_template_public_tests_and_mha_check_only(bundle):
    path, _ = bundle
    names = zipfile.ZipFile(path).namelist()
    tops = {n.removeprefix(f"{BUNDLE_DIR}/").split("/")[0] for n in names}
    assert tops == {"README.md", "requirements.txt", "exercises", "mha_check", "docs"}
    for name in (*FILES, "lab.ipynb", "lab_helpers.py"):
        assert f"{BUNDLE_DIR}/exercises/{name}" in names
    assert f"{BUNDLE_DIR}/docs/heads.png" in names  # the figure the student README shows


def test_unzipped_bundle_checks_untouched_stubs_as_not_attempted(bundle):
    _, folder = bundle
    where = subprocess.run(
        [sys.executable, "-c", "import mha_check; print(mha_check.__file__)"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert where.stdout.strip().startswith(str(folder))  # the bundle's own copy, not the repo's
    result = run_check(folder)
    assert result.returncode == 1
    for qid in QUESTION_IDS:
        lines = [line for line in result.stdout.splitlines() if qid in line]
        assert lines and "not attempted yet" in lines[0], (qid, result.stdout)
    assert "Traceback" not in result.stdout + result.stderr


def test_bundle_passes_once_the_reference_is_filled_in(bundle, tmp_path):
    _, folder = bundle
    filled = tmp_path / BUNDLE_DIR
    shutil.copytree(folder, filled)
    for name in FILES:
        shutil.copy(ROOT / "solutions" / name, filled / "exercises" / name)
    result = run_check(filled)
    assert result.returncode == 0, result.stdout


def test_bundle_contains_no_line_of_the_solutions_hidden_tests_or_rubrics(bundle):
    path, _ = bundle
    # Lines the stubs and public tests share with the reference are fine; the notebook and its
    # helpers must share none.
    stubs = significant_lines(
        p for p in (ROOT / "exercises").rglob("*.*") if not p.name.startswith("lab")
    )
    secret_files = [
        *(ROOT / "solutions").glob("*.*"),
        *(ROOT / "autograder").rglob("*.py"),
        *(ROOT / "autograder").rglob("*.toml"),
    ]
    secrets = significant_lines(secret_files) - stubs  # signatures shared with the stubs are fine
    assert len(secrets) > 100  # the check is looking at real content
    with zipfile.ZipFile(path) as zf:
        shipped = {
            line.strip()
            for name in zf.namelist()
            if not name.endswith(".png")
            for line in zf.read(name).decode().splitlines()
        }
    assert secrets & shipped == set()
