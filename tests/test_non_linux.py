"""Where there is no Linux (macOS, Windows): grading refuses in one line that says what to use
instead; the hand-outs and the student's mha-check keep working.

The platform is faked in a child interpreter for this project's code: ``sys.platform``, and on
Windows no SIGALRM timer and none of the Unix-only standard modules. Third-party packages are
imported first, as this machine's builds (numpy or torch cannot be made to believe they run on
another system), so they stand in for their macOS or Windows builds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = "import numpy, torch, rich.console, rich.padding, rich.text\n"
FAKE = {
    "darwin": "import sys; sys.platform = 'darwin'\n",
    "win32": (
        "import signal, sys; sys.platform = 'win32'\n"
        "for name in ('setitimer', 'SIGALRM', 'ITIMER_REAL'): delattr(signal, name)\n"
        "for name in ('fcntl', 'resource', 'termios', 'pwd', 'grp'): sys.modules[name] = None\n"
    ),
}


def run_as(platform: str, code: str, libraries: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", (LIBRARIES if libraries else "") + FAKE[platform] + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def mha_grade(*argv: str) -> str:
    return f"import sys\nfrom mha_grader.cli import main\nsys.exit(main({list(argv)!r}))\n"


@pytest.mark.parametrize("platform", ["darwin", "win32"])
@pytest.mark.parametrize("command", ["one", "batch"])
def test_grading_exits_2_with_one_line_saying_it_needs_linux(platform, command, tmp_path):
    target = ROOT / "examples" / "submissions" / ("alice" if command == "one" else "")
    done = run_as(platform, mha_grade(command, str(target), "-o", str(tmp_path / "out")))
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"mha-grade {command}: grading needs Linux")
    assert "WSL" in lines[0] and "container" in lines[0]
    assert not (tmp_path / "out").exists()  # nothing was graded, nothing half-written


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_building_the_hand_outs_still_works_without_linux(platform, tmp_path):
    for command in ("bundle", "gradescope"):
        out = tmp_path / f"{command}.zip"
        done = run_as(platform, mha_grade(command, "-o", str(out)))
        assert done.returncode == 0, done.stderr
        assert out.is_file()


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_mha_check_still_checks_a_students_folder_without_linux(platform):
    code = "import sys\nfrom mha_check.cli import main\nsys.exit(main(['solutions']))\n"
    done = run_as(platform, code, libraries=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout and "Linux" not in done.stdout + done.stderr
