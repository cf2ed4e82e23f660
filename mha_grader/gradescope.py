"""The Gradescope autograder zip: ``mha-grade gradescope -o FILE.zip``.

Gradescope extracts the zip into ``/autograder/source``, so everything sits at its top:
``setup.sh`` and ``run_autograder`` (from ``scripts/gradescope/``), the grader (``mha_grader``,
``mha_check``, ``solutions``, ``autograder``), ``requirements.lock``, the two lists of what
grading installs and the grader-error result of last resort. Gradescope runs ``setup.sh`` once,
as root, when it builds the image (``gradescope_image`` chooses its Python); then, for every
submission, ``run_autograder`` from ``/autograder``, which runs ``gradescope_run``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
from pathlib import Path

from .gradescope_run import grader_error_results
from .paths import ROOT

SOURCE_DIRS = ("mha_grader", "mha_check", "solutions", "autograder")
SCRIPTS = ROOT / "scripts" / "gradescope"
EXECUTABLE = {"setup.sh", "run_autograder"}
# What grading imports, installed with their dependencies at the versions the lock pins.
# Not the notebook's packages (ipykernel, jupyter) nor matplotlib (only summary plots use it).
GRADING_PACKAGES = ("numpy", "torch", "snowballstemmer", "markdown-it-py")
# Installed without dependencies: grading uses only otter's test-file format, two modules of
# the standard library alone (see mha_check/otter_format.py); its other dependencies (nbconvert,
# pandas, ...) are large and some need a newer Python than Ubuntu 22.04's python3.11 (3.11.0).
NO_DEPS_PACKAGES = ("otter-grader",)
TORCH_INDEX_VARIABLE = "MHA_TORCH_INDEX_URL"

# run_autograder's last resort, written into the zip: the grader did not write results.json
FALLBACK_REASON = "the grader stopped before writing results.json (see the autograder output)"

GRADESCOPE_HELP = "build a Gradescope autograder zip"


def add_gradescope_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--out", type=Path, required=True, help="the autograder .zip to write")


def canonical_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(lock: Path | None = None) -> dict[str, str]:
    """Canonical package name -> its ``name==version`` line in ``requirements.lock``."""
    pins = {}
    for line in (lock or ROOT / "requirements.lock").read_text().splitlines():
        name, sep, _ = line.partition("==")
        if sep and not line.lstrip().startswith("#"):
            pins[canonical_name(name.strip())] = line.strip()
    return pins


def requirements_text(names: tuple[str, ...]) -> str:
    """``names`` pinned as the lock pins them (a name the lock lacks is a build error)."""
    pins = lock_pins()
    missing = [n for n in names if canonical_name(n) not in pins]
    if missing:
        raise RuntimeError(f"requirements.lock pins no version of {', '.join(missing)}")
    return "".join(pins[canonical_name(n)] + "\n" for n in names)


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


def run_gradescope(args: argparse.Namespace) -> int:
    from .handouts import write_zip

    torch_index = os.environ.get(TORCH_INDEX_VARIABLE) or None
    out = write_zip(args.out, autograder_members(torch_index), EXECUTABLE)
    print(f"Gradescope autograder: {out}")
    print("Upload it as a zip-file autograder; base image Ubuntu 22.04 or 24.04.")
    if not torch_index:
        print(
            f"Note: {TORCH_INDEX_VARIABLE} was not set, so setup.sh installs torch from the "
            "default index (on Linux, the multi-GB CUDA build). Set it to PyTorch's CPU wheel "
            "index and build the zip again for the small CPU build."
        )
    return 0
