"""The Gradescope autograder zip: ``mha-grade gradescope -o FILE.zip``.

Gradescope extracts the zip into ``/autograder/source``, so everything sits at its top:
``setup.sh`` and ``run_autograder`` (from ``scripts/gradescope/``), the grader (``mha_grader``,
``mha_check``, ``solutions``, ``autograder``), ``requirements.lock``, the two lists of what
grading installs (``packages``) and the grader-error result of last resort. Gradescope runs
``setup.sh`` once, as root, when it builds the image (``interpreter`` chooses its Python); then,
for every submission, ``run_autograder`` from ``/autograder``, which runs ``run``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ...paths import ROOT
from .packages import GRADING_PACKAGES, NO_DEPS_PACKAGES, requirements_text
from .run import grader_error_results

SOURCE_DIRS = ("mha_grader", "mha_check", "solutions", "autograder")
SCRIPTS = ROOT / "scripts" / "gradescope"
EXECUTABLE = {"setup.sh", "run_autograder"}
TORCH_INDEX_VARIABLE = "MHA_TORCH_INDEX_URL"

# run_autograder's last resort, written into the zip: the grader did not write results.json
FALLBACK_REASON = "the grader stopped before writing results.json (see the autograder output)"


def setup_script(torch_index: str | None = None) -> str:
    """``setup.sh``; an index given when the zip is built becomes the script's default."""
    text = (SCRIPTS / "setup.sh").read_text()
    if not torch_index:
        return text
    shebang, _, rest = text.partition("\n")
    default = f': "${{{TORCH_INDEX_VARIABLE}:={shlex.quote(torch_index)}}}"  # set at build time\n'
    return f"{shebang}\n{default}{rest}"


def autograder_members(torch_index: str | None = None) -> list[tuple[str, Path | str]]:
    """Archive name -> file (or text), laid out for extraction into /autograder/source."""
    members: list[tuple[str, Path | str]] = [
        ("setup.sh", setup_script(torch_index)),
        ("run_autograder", SCRIPTS / "run_autograder"),
        ("requirements.lock", ROOT / "requirements.lock"),
        ("requirements-grading.txt", requirements_text(GRADING_PACKAGES)),
        ("requirements-nodeps.txt", requirements_text(NO_DEPS_PACKAGES)),
        ("grader-error.json", json.dumps(grader_error_results(FALLBACK_REASON), indent=2) + "\n"),
    ]
    for folder in SOURCE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                members.append((path.relative_to(ROOT).as_posix(), path))
    return members
