"""docs/contract.md cannot drift: every section the repo cites exists, and the ids it lists are
the code's own (question ids and files, signatures, misconception ids)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from mha_check import questions
from mha_grader.diagnose import CATALOGUE, CONTRACT_IDS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "contract.md"
SECTION_SIGN = "\u00a7"  # written as an escape so that this file cites no section itself
SCANNED = {".py", ".md", ".toml", ".sh", ".ipynb"}
SKIPPED_TOP = {"out", "build", "dist"}  # outputs (.gitignore), not the project's text


def sections() -> dict[str, str]:
    """Section number -> its text (up to the next section), from the '## §N Title' headings."""
    parts = re.split(rf"^## {SECTION_SIGN}(\d+)\b.*$", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def subsection(text: str, title: str) -> str:
    """The text under the '### ...' heading that contains ``title``, up to the next heading."""
    parts = re.split(r"^(### .*)$", text, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        if title in heading:
            return body
    raise AssertionError(f"docs/contract.md has no '### ...{title}...' heading here")


def table_rows(text: str) -> list[list[str]]:
    """The body rows of the Markdown tables in ``text`` (header and rule rows left out), as
    stripped cells; a cell's escaped '|' stays inside it."""
    rows, previous = [], ""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            previous = ""
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if previous and not set(line) - set("|-: "):
            rows.pop()  # the row above the rule was the header
        elif set(line) - set("|-: "):
            rows.append(cells)
        previous = line
    return rows


def first_code(cell: str) -> str:
    """The first `code span` of a cell."""
    m = re.search(r"`([^`]+)`", cell)
    assert m, f"expected a `code` name in the cell {cell!r}"
    return m.group(1)


def project_files() -> list[Path]:
    """The project's own text files: hidden folders (.venv, .git), caches and outputs pruned."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        top = Path(folder) == ROOT
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".")
            and d != "__pycache__"
            and not d.endswith(".egg-info")
            and not (top and d in SKIPPED_TOP)
        ]
        found += [Path(folder, f) for f in files if Path(f).suffix in SCANNED]
    return found


def citations() -> list[tuple[str, int, str]]:
    """(file, line, section number) of every '§N' in the project's own text files."""
    out = []
    for path in project_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in re.finditer(rf"{SECTION_SIGN}\s*(\d+)", line):
                out.append((str(path.relative_to(ROOT)), lineno, m.group(1)))
    return out


def test_the_contract_has_sections_1_to_7_in_order():
    assert list(sections()) == [str(n) for n in range(1, 8)]


def test_every_cited_section_exists_in_the_contract():
    cited = citations()
    assert cited, "expected the code to cite docs/contract.md (no section sign found at all)"
    missing = [f"{f}:{n} cites {SECTION_SIGN}{s}" for f, n, s in cited if s not in sections()]
    assert not missing, "sections not in docs/contract.md: " + "; ".join(missing)


def test_nothing_cites_a_contract_outside_the_repository():
    outside = "CONTRACT" + ".md"  # the upper-case name of a document the repo does not hold
    hits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in project_files()
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if outside in line
    ]
    assert not hits, f"cite docs/contract.md instead: {', '.join(hits)}"


def test_section_2_lists_the_question_ids_in_order_with_their_files():
    rows = table_rows(sections()["2"])
    assert tuple(first_code(r[0]) for r in rows) == questions.QUESTION_IDS
    for row in rows:
        qid, kind, where = first_code(row[0]), row[1], first_code(row[2])
        if qid in questions.CODE_QUESTIONS:
            assert (kind, where) == ("code", questions.CODE_QUESTIONS[qid]), row
        else:
            assert (kind, where) == ("written", "answers.md"), row


@pytest.mark.parametrize("student_file", ["multihead.py", "crosscheck.py"])
def test_section_1_gives_each_function_its_signature_in_its_file(student_file):
    text = subsection(sections()["1"], f"`exercises/{student_file}`")
    documented = {}
    for row in table_rows(text):
        signature = first_code(row[0])
        documented[signature.split("(", 1)[0]] = signature
    expected = {q: s for q, s in questions.SIGNATURES.items()}
    expected = {q: s for q, s in expected.items() if questions.CODE_QUESTIONS[q] == student_file}
    assert documented == expected


def test_section_6_fixed_ids_are_the_diagnosis_contract_ids():
    rows = table_rows(subsection(sections()["6"], "Fixed ids"))
    assert tuple(first_code(r[0]) for r in rows) == CONTRACT_IDS
    for row in rows:
        assert first_code(row[1]) == CATALOGUE[first_code(row[0])].where, row


def test_section_6_lists_every_id_the_project_added():
    rows = table_rows(subsection(sections()["6"], "Added by this project"))
    added = [first_code(r[0]) for r in rows]
    assert sorted(added) == sorted(set(CATALOGUE) - set(CONTRACT_IDS))
    for row in rows:
        assert first_code(row[1]) == CATALOGUE[first_code(row[0])].where, row


def test_the_table_reader_sees_what_a_markdown_reader_sees():
    """The helpers above must be able to fail: a header row is not an id, a missing section
    is an error, and escaped pipes stay in their cell."""
    text = "| id | in |\n|---|---|\n| `a` | `x \\| y` |\n\n| `b` | c |\n"
    assert table_rows(text) == [["`a`", "`x \\| y`"], ["`b`", "c"]]
    with pytest.raises(AssertionError):
        subsection("### One\n| `a` |\n", "Two")
    with pytest.raises(AssertionError):
        first_code("no code here")
