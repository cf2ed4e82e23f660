"""Build a Gradescope autograder zip; and, inside the container, grade its submission.

``mha-grade gradescope -o FILE.zip`` packs ``setup.sh``, ``run_autograder`` and the trusted grader
(mha_grader, solutions, autograder, pinned requirements). In the container, ``run_autograder``
runs ``python -m mha_grader.gradescope``, which grades ``$ROOT/submission`` with the same engine
and sandbox as ``mha-grade one`` and writes ``$ROOT/results/results.json``. ``ROOT`` is
``/autograder`` unless the environment variable ``MHA_AUTOGRADER_ROOT`` moves it (for local runs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .paths import ROOT, ensure_solutions_importable

SOURCE_DIRS = ("mha_grader", "mha_check", "solutions", "autograder")
SOURCE_FILES = ("pyproject.toml", "requirements.lock", "README.md")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when the autograder image is built.
set -euo pipefail
ROOT="${MHA_AUTOGRADER_ROOT:-/autograder}"
cd "$ROOT/source"
apt-get update -qq
apt-get install -y -qq bubblewrap python3-venv python3-pip >/dev/null
python3 -m venv "$ROOT/venv"
# torch==2.13.0 is pinned in requirements.lock. To get its small CPU build rather than the
# multi-GB CUDA one, point PIP_EXTRA_INDEX_URL at PyTorch's CPU wheel index before this line.
"$ROOT/venv/bin/pip" install -q -r requirements.lock
"$ROOT/venv/bin/pip" install -q --no-deps -e .
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission.
set -euo pipefail
ROOT="${MHA_AUTOGRADER_ROOT:-/autograder}"
export MHA_AUTOGRADER_ROOT="$ROOT"
cd "$ROOT/source"
exec "${MHA_PYTHON:-$ROOT/venv/bin/python}" -m mha_grader.gradescope
"""

GRADESCOPE_HELP = "build a Gradescope autograder zip"


def add_gradescope_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", type=Path, required=True, help="the autograder .zip to write")


def autograder_members() -> list[tuple[str, Path | str]]:
    members: list[tuple[str, Path | str]] = [
        ("setup.sh", SETUP_SH),
        ("run_autograder", RUN_AUTOGRADER),
    ]
    for name in SOURCE_FILES:
        members.append((f"source/{name}", ROOT / name))
    for folder in SOURCE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                members.append((f"source/{path.relative_to(ROOT).as_posix()}", path))
    return members


def run_gradescope(args: argparse.Namespace) -> int:
    from .handouts import write_zip

    out = write_zip(args.out, autograder_members(), {"setup.sh", "run_autograder"})
    print(f"Gradescope autograder: {out}")
    print("Upload it as a zip-file autograder (base image: Ubuntu with Python 3.11 or newer).")
    return 0


def grade_container(root: Path) -> dict:
    """Grade ``root/submission``; write and return ``root/results/results.json``."""
    from . import report
    from .engine import Engine
    from .submission import load_submission

    submission = load_submission(root / "submission")
    submission.student = _student_name(root) or submission.student
    with Engine() as engine:
        grade = engine.grade(submission)
    results = report.results_json(grade)
    report.atomic_write(root / "results" / "results.json", json.dumps(results, indent=2) + "\n")
    return results


def _student_name(root: Path) -> str | None:
    """The submitter's name from Gradescope's metadata, when there is one."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text())
        return str(meta["users"][0]["name"]) or None
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def main() -> int:
    ensure_solutions_importable()
    root = Path(os.environ.get("MHA_AUTOGRADER_ROOT", "/autograder"))
    results = grade_container(root)
    print(f"graded: {results['score']} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
