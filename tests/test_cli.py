"""mha-grade's command line: every command is imported by name, a broken module of the grader
fails loudly (never as "invalid choice"), a missing package is named in one line, and a rerun
clears what an interrupted write left in the output folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from review_helpers import small_class

from mha_grader import cli
from mha_grader.outputs.folder import OutputFolder

ROOT = Path(__file__).resolve().parent.parent


def run_cli(prelude: str, *argv: str) -> subprocess.CompletedProcess:
    code = f"import sys\n{prelude}\nfrom mha_grader.cli import main\nsys.exit(main({list(argv)!r}))"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_help_lists_every_command():
    help_text = cli._parser().format_help()
    for name in ("one", "batch", "merge", "export", "review", "bundle", "gradescope"):
        assert name in cli.COMMANDS
        assert f"    {name}" in help_text


def test_a_broken_module_of_a_command_fails_loudly_not_as_an_invalid_choice(tmp_path):
    (tmp_path / "subs").mkdir()
    broken = "sys.modules['mha_grader.runs.batch'] = None  # as if batch.py did not import"
    done = run_cli(broken, "batch", str(tmp_path / "subs"), "-o", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "invalid choice" not in done.stderr
    assert "mha_grader.runs.batch" in done.stderr  # the traceback names what is broken


def test_a_missing_package_is_named_in_one_line_and_other_commands_still_run(tmp_path):
    out = tmp_path / "out"
    small_class(out)
    missing = "sys.modules['tomli_w'] = None  # as if the package were not installed"
    done = run_cli(missing, "review", str(out), "--set", "ben", "q1", "3")
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "'tomli_w'" in lines[0] and lines[0].startswith("mha-grade review")
    assert "Traceback" not in done.stderr
    listed = run_cli(missing, "review", str(out), "--list")  # reading needs no tomli_w
    assert listed.returncode == 0, listed.stderr
    assert "ben" in listed.stdout


def test_a_rerun_clears_the_temporary_files_an_interrupted_write_left(tmp_path):
    out = OutputFolder(tmp_path / "out")
    small_class(out.root)
    left = [out.root / ".grades.csv.k2j3h4.tmp", out.student("ben") / ".results.json.x8y9.tmp"]
    left.append(out.plots / ".score_histogram.png.a1b2.tmp")
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a file")
    keep = out.root / "notes.tmp"  # not one of ours: never touched
    keep.write_text("the instructor's")
    removed = out.make().clear_leftovers()  # make() cleared them already; nothing is left
    assert removed == []
    assert not any(p.exists() for p in left)
    assert keep.read_text() == "the instructor's"
    assert [r["student"] for r in out.read_grades()] == ["ana", "ben", "cy", "dee"]
