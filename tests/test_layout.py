"""The layout of the code: rooms by concern, lower rooms never import higher ones, no import
cycles, and the sandbox's worker imports nothing of the trusted side (docs/maintainers.md).

The graph is read from the source (every import statement, in functions too; not those under
``if TYPE_CHECKING:``, which never run), so a cycle cannot hide in a function-local import.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mha_check", "mha_grader")
BASE = (
    "paths",
    "points",
    "outcomes",
    "errors",
    "calls",
    "shown",
)  # the vocabulary every room shares
# Rooms from the lowest up: a module may import its own room and the rooms before it. Rooms on
# one level (a tuple) may not import each other.
ROOMS: list[tuple[str, ...]] = [
    ("mha_check",),
    ("base",),  # the package itself and BASE
    ("mha_grader.sandbox",),
    ("mha_grader.diagnose", "mha_grader.written"),
    ("mha_grader.grading",),
    ("mha_grader.outputs",),
    ("mha_grader.review",),
    ("mha_grader.runs",),
    ("mha_grader.handouts",),
    ("mha_grader.cli",),
]
WORKER = "mha_grader.sandbox.worker"


def module_names() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = module_names()


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_all(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def _all(node: ast.AST):
    for child in ast.iter_child_nodes(node):
        yield child
        yield from _all(child)


def imports_of(name: str) -> list[tuple[str, int]]:
    """(module imported, line) for each import of a project module in ``name``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # "from pkg import sub" imports the submodule; "from pkg import name", the package
            subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES]
            targets = subs if len(subs) == len(node.names) else [*subs, module]
        else:
            continue
        found += [(t, node.lineno) for t in targets if t in MODULES and t != name]
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def room_of(name: str) -> tuple[int, str]:
    """(level, room) of a module: the longest room name it falls under."""
    if name == "mha_grader" or name in {f"mha_grader.{m}" for m in BASE}:
        return 1, "base"
    best: tuple[int, str] | None = None
    for level, rooms in enumerate(ROOMS):
        for room in rooms:
            if name == room or name.startswith(room + "."):
                if best is None or len(room) > len(best[1]):
                    best = (level, room)
    assert best is not None, f"{name} is in no room: add it to ROOMS (and docs/maintainers.md)"
    return best


def test_every_module_is_in_a_room():
    for name in MODULES:
        room_of(name)


def test_lower_rooms_never_import_higher_ones():
    wrong = []
    for name, targets in GRAPH.items():
        level, room = room_of(name)
        for target, line in targets:
            t_level, t_room = room_of(target)
            if t_room != room and t_level >= level:
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


def test_the_import_graph_has_no_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target, _ in GRAPH[name]:
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in MODULES:
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_worker_package_imports_nothing_of_the_trusted_side():
    """Only the standard library, NumPy, torch and the worker package itself (moved here from
    test_sandbox.py, and now also refusing relative imports out of the package)."""
    allowed = set(sys.stdlib_module_names) | {"numpy", "torch"}
    worker = [name for name in MODULES if name == WORKER or name.startswith(WORKER + ".")]
    assert len(worker) >= 5  # the package is where this test looks for it
    for name in worker:
        path = MODULES[name]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [(node.module or "").split(".")[0]]
            elif isinstance(node, ast.ImportFrom):
                # relative: within the worker package only (from . import x), never out of it
                assert node.level == 1, f"{path.name}:{node.lineno} imports out of the worker"
                continue
            else:
                continue
            assert set(roots) <= allowed, f"{path.name}:{node.lineno} imports {roots}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from .. import zygote\n", "imports out of the worker"),
        ("from ...grading import engine\n", "imports out of the worker"),
        ("import mha_grader.shown\n", "imports ['mha_grader']"),
    ],
)
def test_the_worker_rule_catches_an_import_of_the_trusted_side(
    tmp_path, monkeypatch, source, expected
):
    fake = tmp_path / "evil.py"
    fake.write_text(source)
    monkeypatch.setitem(MODULES, f"{WORKER}.evil", fake)
    with pytest.raises(AssertionError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        test_the_worker_package_imports_nothing_of_the_trusted_side()


def test_the_graph_rules_catch_a_cycle_and_an_upward_import(monkeypatch):
    # a room that imports the one above it, and back: both rules must see it
    monkeypatch.setitem(GRAPH, "mha_grader.outcomes", [("mha_grader.cli", 1)])
    with pytest.raises(AssertionError):
        test_lower_rooms_never_import_higher_ones()
    with pytest.raises(AssertionError):
        test_the_import_graph_has_no_cycle()


# -- one vocabulary, one owner of the output folder ----------------------------------------------

# The words of the reports, each spelled in one module only.
VOCABULARY = {
    "mha_grader/outcomes.py": (
        "grader-error",
        "refused",
        "missing-files",
        "unreadable-files",
        "protocol-error",
        "import-error",
        "needs-review",
        "review-reopened",
        "misconception:",
        "carried-forward:",
    ),
    "mha_grader/outputs/folder.py": (
        "grades.csv",
        "results.json",
        "feedback.md",
        "summary.md",
        "batch.json",
        "sources.json",
        "grade.json",
        "reviews.toml",
        "similarity.json",
        "similarity.html",
        ".review-queue.json",
        ".reviews.lock",
    ),
}
# Gradescope's own layout (/autograder/results/results.json) is not an output folder's.
ELSEWHERE = {("mha_grader/handouts/gradescope/run.py", "results.json")}


def string_constants(path: Path) -> set[str]:
    """The string literals of a module, docstrings and f-string parts included."""
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


@pytest.mark.parametrize("owner", sorted(VOCABULARY))
def test_each_word_of_the_reports_is_spelled_in_its_one_module(owner):
    found = []
    for name, path in MODULES.items():
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        if rel == owner or not name.startswith("mha_grader"):
            continue
        texts = string_constants(path)
        for word in VOCABULARY[owner]:
            # as a value of its own (a file name, a status): prose that mentions it is fine
            if any(t == word or t.startswith(word) and word.endswith(":") for t in texts):
                if (rel, word) not in ELSEWHERE:
                    found.append(f"{rel}: {word!r}")
    assert found == []


def test_the_vocabulary_rule_catches_a_status_spelled_elsewhere(monkeypatch, tmp_path):
    fake = tmp_path / "fake.py"
    fake.write_text('STATUS = "grader-error"\nFILE = "grades.csv"\n')
    monkeypatch.setitem(MODULES, "mha_grader.runs.fake", fake)
    with pytest.raises(AssertionError, match="grader-error"):
        test_each_word_of_the_reports_is_spelled_in_its_one_module("mha_grader/outcomes.py")
    with pytest.raises(AssertionError, match="grades.csv"):
        test_each_word_of_the_reports_is_spelled_in_its_one_module("mha_grader/outputs/folder.py")
