"""The README and the guides: a short README with a door to each guide, repository paths that
exist, links that land, and a students' README that names nothing students do not have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
STUDENT_README = ROOT / "exercises" / "README.md"  # ships in the student bundle
GUIDES = (
    "docs/instructors.md",
    "docs/containment.md",
    "docs/maintainers.md",
    "docs/contract.md",
    "exercises/README.md",
    "benchmarks/README.md",
)
# Documents whose backticked repository paths must exist (the students' README is checked
# against the bundle instead, below).
CHECKED = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]
TOP = (
    "autograder/",
    "benchmarks/",
    "docs/",
    "examples/",
    "exercises/",
    "mha_check/",
    "mha_grader/",
    "scripts/",
    "solutions/",
    "tests/",
)
NOT_YET = {
    ".venv/",  # made by scripts/env.sh on first use
    "out/",  # what grading writes
}
# Folders that are in the repository but not in the student bundle (README.md,
# requirements.txt, exercises/, mha_check/, docs/heads.png).
REPOSITORY_ONLY = ("solutions", "autograder", "mha_grader", "tests", "scripts", "benchmarks")


def repository_paths(text: str) -> list[str]:
    """Every word of a `code span` that starts with a top-level folder of the repository."""
    found = []
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            word = word.strip(",;:()'\"").removeprefix("./")
            if word.startswith(TOP) or word.startswith(tuple(NOT_YET)):
                found.append(word)
    return found


def missing_paths(text: str) -> list[str]:
    """The repository paths of ``text`` that the checkout does not hold; ``<id>`` and ``*``
    stand for any name."""
    missing = []
    for path in repository_paths(text):
        if path in NOT_YET or any(path.startswith(p) for p in NOT_YET if p.endswith("/")):
            continue
        pattern = re.sub(r"<[^>]+>", "*", path).rstrip("/")
        if not list(ROOT.glob(pattern)):
            missing.append(path)
    return missing


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def broken_links(doc: Path) -> list[str]:
    """Relative Markdown links of ``doc`` whose file or heading does not exist."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M)
            if anchor not in {slug(h) for h in headings}:
                broken.append(target)
    return broken


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move detail into a guide"


@pytest.mark.parametrize("guide", GUIDES)
def test_each_guide_exists_and_the_readme_opens_it(guide):
    assert (ROOT / guide).is_file()
    link = rf"\]\(\s*{re.escape(guide)}(#[^)]*)?\s*\)"
    assert re.search(link, README.read_text(encoding="utf-8")), f"README.md links no {guide}"


def test_the_readme_keeps_the_test_command():
    assert "bash scripts/test.sh" in README.read_text(encoding="utf-8")


def test_containment_has_the_section_code_and_tests_cite():
    text = (ROOT / "docs" / "containment.md").read_text(encoding="utf-8")
    assert re.search(r"^## How student code runs$", text, flags=re.M)


@pytest.mark.parametrize("doc", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_in_the_docs_exists(doc):
    assert missing_paths(doc.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("doc", [*CHECKED, STUDENT_README], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_lands(doc):
    assert broken_links(doc) == []


def test_the_students_readme_names_no_repository_only_path():
    text = STUDENT_README.read_text(encoding="utf-8")
    found = re.findall(rf"(?<![\w./-])(?:{'|'.join(REPOSITORY_ONLY)})/", text)
    assert found == [], "the student bundle has no " + ", ".join(sorted(set(found)))


def test_the_checks_can_fail():
    text = "Run `mha_grader/no_such.py`, then `tests/test_docs.py` and `autograder/tests/<qid>.py`."
    assert missing_paths(text) == ["mha_grader/no_such.py"]
    assert missing_paths("`out/grades.csv` and `.venv/bin/mha-grade`") == []
    assert slug("Grade in shards (Slurm, Kubernetes)") == "grade-in-shards-slurm-kubernetes"
