"""`check("split_heads")` and `check_all()` for the lab notebook: mha-check's own report, in a cell.

The notebook never runs the checks in its kernel: mha-check replaces the student's modules in
``sys.modules`` and its time limit may end its own process, and a kernel should live through
neither. So each call starts ``python -m mha_check`` in a subprocess, from the folder that holds
this package: the unpacked student bundle and the repository find it the same way (mha_check/
beside exercises/), and the lines printed are mha-check's, with the same time limit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .folder import default_path

ROOT = Path(__file__).resolve().parent.parent  # the folder holding mha_check/ (and exercises/)


def _command(qids: tuple[str, ...], folder: Path, time_limit: float | None) -> list[str]:
    command = [sys.executable, "-m", "mha_check", str(folder)]
    for qid in qids:
        command += ["--question", qid]
    if time_limit is not None:  # otherwise mha-check's own default applies
        command += ["--time-limit", str(time_limit)]
    return command


def check(*qids: str, folder: str | Path | None = None, time_limit: float | None = None) -> None:
    """Run mha-check on your files for these questions (every one if none) and print its report.

    `folder` defaults to the one mha-check itself would pick from the notebook's working folder
    (the notebook's own folder, which holds multihead.py). Interrupting the kernel stops the check.
    """
    target = Path(folder) if folder is not None else default_path(Path.cwd())
    env = {
        **os.environ,
        "PYTHONIOENCODING": "utf-8",
        "FORCE_COLOR": "1",  # notebooks show terminal colours: the same green and red as mha-check
    }
    process = subprocess.Popen(
        _command(qids, target.resolve(), time_limit),
        cwd=ROOT,  # `python -m mha_check` finds this very package first
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:  # line by line, so a slow check shows progress
            print(line, end="", flush=True)
        process.wait()
    except KeyboardInterrupt:
        process.kill()
        process.wait()
        print("\ncheck interrupted: mha-check was stopped before it finished.")


def check_all(folder: str | Path | None = None, time_limit: float | None = None) -> None:
    """Every question, in the order of the grade report: the same as running `mha-check`."""
    check(folder=folder, time_limit=time_limit)
