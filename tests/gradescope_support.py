"""For the Gradescope tests and benchmark: an autograder root laid out as Gradescope's
specification says (the zip extracted into ROOT/source, run_autograder copied to ROOT, setup.sh
run there, the submission in ROOT/submission); Gradescope's results.json format (its autograder
specification) as a JSON schema, with what this project promises on top (question ids, totals);
and the packages setup.sh installs for grading."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import jsonschema
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from mha_check.questions import QUESTION_IDS
from mha_grader.handouts.gradescope import packages
from mha_grader.points import POINTS

ROOT = Path(__file__).resolve().parent.parent
BASH = shutil.which("bash") or "/bin/bash"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MHA_", "PIP_"))}
    # pip may check what is installed but can fetch nothing (PIP_NO_INDEX, no find-links).
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return {**env, **extra}


def build_zip(tmp: Path, **env: str) -> Path:
    out = tmp / "autograder.zip"
    done = subprocess.run(
        [sys.executable, "-m", "mha_grader.cli", "gradescope", "-o", str(out)],
        cwd=ROOT,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mha-grade gradescope failed: {done.stderr}")
    return out


def lay_out(zip_path: Path) -> Path:
    """A root as Gradescope makes it, in a folder others may traverse (like /autograder), so
    that only the autograder's own closing keeps the student's uid out."""
    root = Path(tempfile.mkdtemp(prefix="mha-gradescope-"))
    root.chmod(0o755)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
        for info in zf.infolist():  # zipfile drops the modes; unzip keeps them
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                (root / "source" / info.filename).chmod(mode)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    return root


def run_setup(
    root: Path, wrap: Callable[[list[str]], list[str]] | None = None, **env: str
) -> subprocess.CompletedProcess:
    """Run ROOT/source/setup.sh as Gradescope does (``wrap``: in the refusing kernel)."""
    argv = [BASH, str(root / "source" / "setup.sh")]
    return subprocess.run(
        wrap(argv) if wrap else argv,
        cwd=root / "source",
        env=clean_env(MHA_AUTOGRADER_ROOT=str(root), MHA_SKIP_APT="1", **env),
        capture_output=True,
        text=True,
        timeout=600,
    )


def submit(root: Path, folder: Path, **placeholders: str) -> None:
    """Put a submission in ROOT/submission, as Gradescope does (a fresh container each time:
    the results of an earlier run are gone)."""
    for name in ("submission", "results"):
        if (root / name).exists():
            shutil.rmtree(root / name)
    (root / "results").mkdir()
    (root / "submission").mkdir()
    for file in folder.iterdir():
        text = file.read_text()
        for key, value in placeholders.items():
            text = text.replace(f"__{key}__", value)
        (root / "submission" / file.name).write_text(text)
    meta = {"users": [{"name": folder.name, "email": "student@example.edu"}]}
    (root / "submission_metadata.json").write_text(json.dumps(meta))


VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
NUMBER = {"type": "number"}

TEST = {
    "type": "object",
    "properties": {
        "score": NUMBER,
        "max_score": NUMBER,
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMAT,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}

SCHEMA = {
    "type": "object",
    "properties": {
        "score": NUMBER,
        "execution_time": NUMBER,
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array"},
    },
    "additionalProperties": False,
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}


def validate(results: dict, *, per_question: bool = True) -> None:
    """Raise unless ``results`` is a results.json Gradescope accepts, whose tests each show the
    student a name, points and an output, name their question and add up, with the grader's
    own stdout hidden from students; ``per_question``: every question's points are there."""
    json.loads(json.dumps(results, allow_nan=False))  # strict JSON: no NaN or Infinity
    jsonschema.validate(results, SCHEMA)
    assert results.get("stdout_visibility") == "hidden"  # run_autograder's output: below
    tests = results.get("tests", [])
    for test in tests:
        assert {"name", "score", "max_score", "output", "visibility"} <= test.keys(), test
        assert test["name"].split(":")[0] in QUESTION_IDS, test["name"]
        assert 0 <= test["score"] <= test["max_score"], test
    assert abs(sum(t["score"] for t in tests) - results["score"]) < 1e-6
    if per_question:
        for qid in QUESTION_IDS:
            total = sum(t["max_score"] for t in tests if t["name"].startswith(qid + ":"))
            assert abs(total - POINTS[qid]) < 1e-6, qid


def grading_distributions() -> dict[str, SpecifierSet]:
    """Every distribution setup.sh installs for grading (its dependencies as pip resolves them
    for this Python; the no-deps ones alone), with its Requires-Python."""
    found: dict[str, SpecifierSet] = {}
    nodeps = set(packages.NO_DEPS_PACKAGES)
    todo = [*packages.GRADING_PACKAGES, *nodeps]
    while todo:
        name = todo.pop()
        dist = importlib.metadata.distribution(name)
        key = packages.canonical_name(dist.metadata["Name"])
        if key in found:
            continue
        found[key] = SpecifierSet(dist.metadata.get("Requires-Python") or "")
        if name in nodeps:
            continue
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found
