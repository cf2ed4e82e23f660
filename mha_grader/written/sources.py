"""The texts students were handed, as the grader knows them: copying one earns nothing.

They are the students' README, the lab notebook's markdown and the comments and strings of its
code, and the docstrings, comments and messages of every Python file in exercises/ (the stubs,
the notebook's helpers, the public tests). The question itself is not among them: a rubric's
``prompt`` recognises it, and a claim in the question's words ("Each head has its own projection
matrices.") is still a claim.

The grader reads them from a snapshot, autograder/rubrics/handouts.json, because the autograder
zip does not hold exercises/; a test keeps the snapshot equal to what exercises/ holds. After
changing a hand-out, a rubric or the code that reads them (the rubrics' readings of the
hand-outs are stored beside the snapshot: handout_index.py), write both again:
    python -m mha_grader.written.refresh
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..paths import EXERCISES, RUBRICS

SNAPSHOT = RUBRICS / "handouts.json"
NAMES = {  # how feedback names a hand-out
    "README.md": "the exercises' README",
    "lab.ipynb": "the lab notebook",
    "multihead.py": "multihead.py's docstrings and comments",
    "crosscheck.py": "crosscheck.py's docstrings and comments",
    "lab_helpers.py": "the lab notebook's helpers",
    "tests": "the public tests' messages",
}


@dataclass(frozen=True)
class Handout:
    source: str  # a path relative to exercises/
    name: str  # as feedback names it
    text: str


def _python_text(code: str) -> str:
    """Comments, docstrings and string literals (f-strings' literal parts too), one a line."""
    parts: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                parts.append(tok.string.lstrip("#").strip())
    except (tokenize.TokenError, SyntaxError):
        pass
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return "\n".join(parts)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts.append(node.value)
        if isinstance(node, ast.FunctionDef):
            parts.extend(_raises(node))
    return "\n".join(p for p in parts if re.search(r"[A-Za-z]{3}", p))


def _raises(node: ast.FunctionDef) -> list[str]:
    """A docstring's "Raises:" entries as the sentences a student makes of them: "- ValueError
    if X (Y)." under multi_head_attention's "Raises:" is "multi_head_attention raises ValueError
    if X (Y)." (the entry as written is read too)."""
    doc = ast.get_docstring(node) or ""
    section = re.search(r"^Raises:\n((?:[ \t]*-.*\n?(?:[ \t]+[^-\s].*\n?)*)+)", doc, re.M)
    if section is None:
        return []
    entries = re.split(r"^[ \t]*- ", section.group(1), flags=re.M)
    return [f"{node.name} raises {' '.join(e.split())}" for e in entries if e.strip()]


def _markdown_text(text: str) -> str:
    """The words of Markdown: no image targets, link targets, table bars or emphasis marks (a
    bar between two cells of a table row keeps them apart, as a semicolon: each cell is a part
    of its own that an answer may paste)."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(?<=\S)[ \t]*\|[ \t]*(?=[^\s|-])", " ; ", text)
    return re.sub(r"[|*#`>]", " ", text)


def _notebook_text(raw: str) -> str:
    cells = json.loads(raw).get("cells", [])
    parts = []
    for cell in cells:
        source = "".join(cell.get("source", []))
        if cell.get("cell_type") == "markdown":
            parts.append(_markdown_text(source))
        elif cell.get("cell_type") == "code":
            parts.append(_python_text(source))
    return "\n\n".join(parts)


def read_handouts(folder: Path = EXERCISES) -> list[Handout]:
    """What exercises/ hands students, as text (answers.md, the question template, is left out)."""
    found = []
    readme = folder / "README.md"
    if readme.exists():
        found.append(Handout("README.md", NAMES["README.md"], _markdown_text(readme.read_text())))
    notebook = folder / "lab.ipynb"
    if notebook.exists():
        found.append(Handout("lab.ipynb", NAMES["lab.ipynb"], _notebook_text(notebook.read_text())))
    for path in sorted(folder.glob("*.py")):
        name = NAMES.get(path.name, f"{path.name}'s docstrings and comments")
        found.append(Handout(path.name, name, _python_text(path.read_text())))
    for path in sorted((folder / "tests").glob("*.py")):
        found.append(Handout(f"tests/{path.name}", NAMES["tests"], _python_text(path.read_text())))
    return found


def snapshot_text(handouts: list[Handout]) -> str:
    return json.dumps([h.__dict__ for h in handouts], indent=1, ensure_ascii=False) + "\n"


@cache
def load_handouts(path: Path = SNAPSHOT) -> tuple[Handout, ...]:
    """The snapshot the grader reads (none when it is missing: nothing is then called a copy)."""
    if not path.exists():
        return ()
    return tuple(Handout(**h) for h in json.loads(path.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite {SNAPSHOT.name}")
    args = parser.parse_args(argv)
    text = snapshot_text(read_handouts())
    if args.write:
        SNAPSHOT.write_text(text, encoding="utf-8")
        print(f"wrote {SNAPSHOT}")
        return 0
    current = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    print("up to date" if current == text else f"{SNAPSHOT.name} differs: run with --write")
    return 0 if current == text else 1


if __name__ == "__main__":
    sys.exit(main())
