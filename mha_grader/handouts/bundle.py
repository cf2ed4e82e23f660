"""The student hand-out zip (the Gradescope autograder zip is ``gradescope/build.py``).

The bundle is built from an allow-list (stubs, template, public tests, mha_check, a student
README), never by copying a folder and deleting secrets: what is not listed cannot leak.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

from ..paths import EXERCISES, PUBLIC_TESTS, ROOT

BUNDLE_DIR = "mha-exercises"  # the one folder students get when they unzip
STUDENT_REQUIREMENTS = "numpy>=2.0,<3\ntorch==2.13.0\notter-grader==7.0.0\nrich>=13\n"
# mha-check's answers.md parser, pinned as the grader has it: both must read the same words.
PINNED_CHECK_PACKAGES = ("markdown-it-py",)
# The lab notebook's packages, pinned to the versions this project tests (requirements.lock).
# Students only: grading never runs the notebook.
LAB_PACKAGES = ("ipykernel", "matplotlib")
# The lab notebook, the helpers it imports, and the figure the student README shows (kept at
# docs/ beside the README both in exercises/ and at the top of the bundle).
LAB_FILES = ("lab.ipynb", "lab_helpers.py")
README_FIGURE = "docs/heads.png"


def _py_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def student_requirements() -> str:
    """requirements.txt for students: the checks' packages, then the notebook's, pinned."""
    locked = dict(
        line.split("==", 1)
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if "==" in line
    )
    check = "".join(f"{name}=={locked[name]}\n" for name in PINNED_CHECK_PACKAGES)
    lab = "".join(f"{name}=={locked[name]}\n" for name in LAB_PACKAGES)
    return STUDENT_REQUIREMENTS + check + "# the lab notebook (exercises/lab.ipynb)\n" + lab


def bundle_members() -> dict[str, Path | str]:
    """Archive name -> source file (or literal text) for the student bundle."""
    members: dict[str, Path | str] = {
        f"{BUNDLE_DIR}/README.md": EXERCISES / "README.md",
        f"{BUNDLE_DIR}/{README_FIGURE}": EXERCISES / README_FIGURE,
        f"{BUNDLE_DIR}/requirements.txt": student_requirements(),
    }
    for name in ("multihead.py", "crosscheck.py", "answers.md", *LAB_FILES):
        members[f"{BUNDLE_DIR}/exercises/{name}"] = EXERCISES / name
    for path in _py_files(PUBLIC_TESTS):
        members[f"{BUNDLE_DIR}/exercises/tests/{path.name}"] = path
    for path in _py_files(ROOT / "mha_check"):
        members[f"{BUNDLE_DIR}/{path.relative_to(ROOT).as_posix()}"] = path
    return members


def write_zip(out: Path, members: Iterable[tuple[str, Path | str]], executable: set[str]) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, src in members:
            data = src.read_bytes() if isinstance(src, Path) else src.encode()
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))  # reproducible zips
            info.external_attr = (0o755 if name in executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    tmp.replace(out)
    return out


def build_bundle(out: Path) -> Path:
    """Write the student hand-out zip to `out` and return its path."""
    return write_zip(out, bundle_members().items(), executable=set())
