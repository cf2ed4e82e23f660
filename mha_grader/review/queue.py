"""The review queue in a terminal: one item at a time, worst first, typed answers only.

Plain line input (no mouse, no full-screen mode), so it works over ssh and in any terminal.
For each item: the question, what the rubric asks, the student's visible answer (or the code of
the function), the grader's score and reasons. The reviewer types a score and an optional note,
presses Enter to accept the grader's score, ``s`` to skip, ``b`` to go back, ``q`` to quit.
Every decision is written at once (``apply.record``), so quitting loses nothing; the items
skipped are remembered in ``OUT/.review-queue.json`` and come after the others next time, so a
new session starts where the last one stopped.

Everything a student wrote is shown as plain text, with control characters removed: never as
markup, never as terminal escapes.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

from mha_check.questions import CODE_QUESTIONS, SIGNATURES, WRITTEN_QUESTIONS

from ..grading.submission import load_submission
from ..outcomes import Tag
from ..outputs import similarity
from ..outputs.folder import CODE_FILES, OutputFolder, as_folder, write_atomic
from ..outputs.reports import points
from ..outputs.summary import build_summary
from ..paths import EXERCISES
from ..points import POINTS
from ..written.rubric import load_rubrics
from . import apply, decisions
from .decisions import parse_score
from .items import Item

MAX_ANSWER = 6000  # characters of an answer shown (the grader reads less)
MAX_CODE_LINES = 60
HELP = """\
  a number   the score for this question (2, 2.5, 2/4); then a note the student reads (optional)
  Enter      accept the grader's score (on an item decided before: keep the decision)
  s          skip: the item stays open and comes back at the end, also next time
  b          back to the previous item (its decision can be changed)
  c          clear the decision on this item: the grader's score stands again
  q          quit (every decision is already saved); run the same command to go on"""

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b.|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """Student text safe for a terminal: no escapes, no control characters but newline/tab,
    and every invisible format character (Unicode's Cf: the bidirectional controls that let a
    line show other code than Python runs, as in Trojan Source; zero-width characters; soft
    hyphens) shown as its code point, ``⟨U+2067⟩``."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if text.isascii():
        return text
    return "".join(
        f"\u27e8U+{ord(c):04X}\u27e9" if unicodedata.category(c) == "Cf" else c for c in text
    )


# -- what each question asks --------------------------------------------------------------------


@cache
def _stub_summaries() -> dict[str, str]:
    """Each code question's function: its signature and the first line of the stub docstring."""
    found = dict(SIGNATURES)
    for name in ("multihead.py", "crosscheck.py"):
        try:
            tree = ast.parse((EXERCISES / name).read_text())
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in found:
                doc = (ast.get_docstring(node) or "").strip().splitlines()
                if doc:
                    found[node.name] = f"{SIGNATURES[node.name]}: {doc[0]}"
    return found


def question_text(qid: str) -> str:
    """The question as students read it: a written question's prompt (from its rubric), a code
    question's function."""
    if qid in WRITTEN_QUESTIONS:
        try:
            return load_rubrics()[qid].prompt or qid
        except Exception:  # a broken rubric must not stop the review
            return qid
    return _stub_summaries().get(qid, qid)


def rubric_asks(qid: str) -> list[tuple[float, str]]:
    """A written question's rubric: (points, idea) per concept that earns points."""
    rubric = load_rubrics()[qid]
    total = rubric.total_weight or 1.0
    return [(c.points / total * POINTS[qid], c.idea) for c in rubric.concepts if c.points > 0]


# -- the student's code -----------------------------------------------------------------------

MAX_BINDING_LINES = 40  # lines of a statement that binds the name, shown


@dataclass(frozen=True)
class Binding:
    """A statement that binds a name in a module: where, how, its text."""

    line: int
    kind: str  # "def", "class", "assignment", "import", "deletion", "global" (set in a function)
    source: str
    conditional: bool = False  # inside an if, for, while, try or with at module level


@dataclass(frozen=True)
class Shown:
    """What the queue shows of a code question's function: every statement of its file that
    binds the name (in file order), and the grader's note on them."""

    bindings: tuple[Binding, ...]
    note: str = ""
    named: tuple[tuple[str, Binding], ...] = ()  # what a last assignment names, and its binding

    @property
    def ran(self) -> Binding | None:
        """The binding in force after import: the last one at module level."""
        at_import = [b for b in self.bindings if b.kind != "global"]
        return at_import[-1] if at_import else None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _stores(node: ast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name`` in the scope it stands in (not inside a function, class,
    lambda or comprehension of its own)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store | ast.Del):
            return True
        if isinstance(n, ast.ExceptHandler) and n.name == name:
            return True
        if isinstance(n, ast.MatchAs | ast.MatchStar) and n.name == name:
            return True
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, _SCOPES + _COMPREHENSIONS):
                todo.append(child)
    return False


def _segment(text: str, node: ast.stmt, header_only: bool = False) -> str:
    lines = re.split(r"\r\n|\r|\n", text)  # the lines Python numbers
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    last = node.lineno if header_only else (node.end_lineno or node.lineno)
    last = min(last, first + MAX_BINDING_LINES - 1)
    return "\n".join(lines[first - 1 : last])


def _bindings(text: str, tree: ast.Module, name: str) -> list[Binding]:
    """Every statement that binds ``name`` as a global of the module, in file order: at module
    level (also inside its if, for, while, try, with and match), and in functions that declare
    it ``global``."""
    found: list[Binding] = []

    def add(node: ast.AST, kind: str, conditional: bool, header_only: bool = False) -> None:
        source = _segment(text, node, header_only)
        found.append(Binding(node.lineno, kind, source, conditional))

    def visit(body: list, conditional: bool) -> None:
        for node in body:
            if isinstance(node, ast.ExceptHandler | ast.match_case):
                if isinstance(node, ast.ExceptHandler) and node.name == name:
                    add(node, "assignment", True, header_only=True)
                visit(node.body, True)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if node.name == name:
                    add(node, "class" if isinstance(node, ast.ClassDef) else "def", conditional)
                if not isinstance(node, ast.ClassDef) and any(
                    isinstance(n, ast.Global) and name in n.names for n in ast.walk(node)
                ):
                    for stmt in ast.walk(node):  # set by a function that declares it global
                        simple = not any(getattr(stmt, f, None) for f in _BODIES)
                        if isinstance(stmt, ast.stmt) and simple and not isinstance(stmt, _SCOPES):
                            if _stores(stmt, name):
                                add(stmt, "global", True, header_only=True)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                    add(node, "import", conditional)
            elif any(getattr(node, field, None) for field in _BODIES):
                head = [v for f, v in ast.iter_fields(node) if f not in _BODIES]
                parts = [x for v in head for x in (v if isinstance(v, list) else [v])]
                if any(isinstance(x, ast.AST) and _stores(x, name) for x in parts):
                    add(node, "assignment", conditional, header_only=True)  # for, with, walrus
                for field in _BODIES:
                    visit(getattr(node, field, None) or [], True)
            elif _stores(node, name):
                add(node, "deletion" if isinstance(node, ast.Delete) else "assignment", conditional)

    visit(tree.body, False)
    return sorted(found, key=lambda b: b.line)


def _set_from(files: dict[str, str], own: str, name: str) -> list[str]:
    """Where the other code files set ``<module>.name`` (or ``setattr(..., "name", ...)``)."""
    found = []
    for other in CODE_FILES:
        text = files.get(other)
        if other == own or not text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            sets = (
                isinstance(node, ast.Attribute)
                and node.attr == name
                and isinstance(node.ctx, ast.Store | ast.Del)
            ) or (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "setattr"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value == name
            )
            if sets:
                found.append(f"{other} sets .{name} at line {node.lineno}")
    return found


def _root(node: ast.expr) -> ast.expr:
    """The name an attribute, subscript or call chain starts from (``sys`` in
    ``sys.modules["numpy"].exp``)."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.Starred):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _imported_set(files: dict[str, str], qid: str) -> list[str]:
    """Where the files loaded with the question's function (``decisions.code_files``) assign
    to, or delete, an attribute of something they import, a module above all (``np.exp =
    np.abs``; ``setattr(np, ...)``; ``np.__dict__[...] = ...``; through a name bound to it):
    every function calling it then gets what was set, whatever its own text says."""
    found = []
    for name in decisions.code_files(qid):
        text = files.get(name)
        if not text:
            continue
        try:
            tree = ast.parse(similarity.read_code(text))
        except (SyntaxError, ValueError):
            continue
        imported = {
            (a.asname or a.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for a in node.names
            if a.name != "*"
        }
        for _ in range(3):  # names bound to them (m = np), and names bound to those
            imported |= {
                t.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
                for t in node.targets
                if isinstance(t, ast.Name)
            }
        for node in ast.walk(tree):
            target = None
            if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                target = node
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") in ("setattr", "delattr")
                and node.args
            ):
                target = node.args[0]
            if target is None:
                continue
            root = _root(target)
            if name != CODE_QUESTIONS[qid] and getattr(target, "attr", None) == qid:
                continue  # (named by _set_from)
            if isinstance(root, ast.Name) and root.id in imported:
                what = ast.unparse(target) if isinstance(target, ast.expr) else root.id
                found.append(
                    f"{name} sets {what[:60]} at line {node.lineno}, an attribute of "
                    f"{root.id}, which it imports: code calling it gets what was set"
                )
    return found


def what_ran(files: dict[str, str], qid: str) -> Shown | None:
    """Every statement of the student's file that binds a code question's function (the last
    one is what ran at import), with a note when that is not a plain, single ``def``: bound more
    than once, by an assignment, decorated, conditionally, from the other file, in a file
    that builds code at run time, or beside code that sets an attribute of an imported module
    (``np.exp = np.abs``: what its calls reach is not what the file shows). None when the file
    is missing or does not parse."""
    own = CODE_QUESTIONS[qid]
    text = files.get(own)
    if text is None:
        return None
    text = similarity.read_code(text)  # as Python reads it (a coding declaration honoured)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found = _bindings(text, tree, qid)
    at_import = [b for b in found if b.kind != "global"]
    notes = []
    served = [b for b in _bindings(text, tree, "__getattr__") if b.kind == "def"]
    if served and not at_import:
        found.append(served[-1])
        notes.append(
            f"{own} binds no {qid}; its module __getattr__ (line {served[-1].line}) serves "
            "names it does not bind: what ran is what that returned"
        )
    last = at_import[-1] if at_import else None
    if len(at_import) > 1:
        lines = ", ".join(str(b.line) for b in at_import[:-1]) + f" and {last.line}"
        notes.append(
            f"{qid} is bound {len(at_import)} times in {own} (lines {lines}); the last, at line "
            f"{last.line} ({_kinds(last)}), is what ran at import"
        )
    elif last is not None and last.kind != "def":
        notes.append(f"{qid} is bound by {_kinds(last)} at line {last.line}, not a def")
    if last is not None and last.conditional:
        notes.append(
            f"line {last.line} is inside an if, for, while, try or with: it ran only if that "
            "reached it"
        )
    if last is not None and last.kind == "def" and last.source.lstrip().startswith("@"):
        notes.append(f"{qid} is decorated: what ran is what the decorator returned")
    named = []
    if last is not None and last.kind == "assignment":
        for stmt in ast.walk(tree):
            if getattr(stmt, "lineno", None) == last.line and isinstance(stmt, ast.Assign):
                if isinstance(stmt.value, ast.Name) and stmt.value.id != qid:
                    target = [b for b in _bindings(text, tree, stmt.value.id) if b.kind != "global"]
                    if target:
                        named.append((stmt.value.id, target[-1]))
                        notes.append(f"it names {stmt.value.id}, bound at line {target[-1].line}")
                break
    later = [str(b.line) for b in found if b.kind == "global"]
    if later:
        notes.append(
            f"a function declaring it global rebinds it when called (line {', '.join(later)})"
        )
    notes += _set_from(files, own, qid)
    notes += _imported_set(files, qid)
    reasons = similarity.runtime_reasons(files[own])
    if reasons:
        notes.append(
            f"{own} may build or bind code at run time ({similarity.describe(reasons)}): what "
            "ran may be none of these"
        )
    return Shown(tuple(found), "; ".join(notes) + ("." if notes else ""), tuple(named))


def _kinds(b: Binding) -> str:
    """How a binding binds, in words."""
    return {
        "def": "a def",
        "class": "a class",
        "import": "an import",
        "deletion": "a del",
        "global": "a function that declares it global",
    }.get(b.kind, "an assignment")


def function_source(files: dict[str, str], qid: str) -> str | None:
    """The source of what the student's file binds to a code question's name last (what ran
    at import), or None."""
    shown = what_ran(files, qid)
    return shown.ran.source if shown is not None and shown.ran is not None else None


def code_of(out: OutputFolder, item: Item) -> tuple[Shown | None, str]:
    """The student's function as graded (every binding of its name, ``what_ran``), and where
    it was read (or why it is not shown)."""
    candidates = []
    kept = out.read_sources().get(item.student)
    if kept:
        candidates.append((kept, f"{out.SOURCES} in the output folder"))  # short: a title
    if item.source and Path(item.source).exists():
        try:
            candidates.append((load_submission(item.source).files, item.source))
        except Exception:  # unreadable now: nothing to show from there
            pass
    sealed = apply.read_sealed(out, item.student)
    for files, where in candidates:
        if sealed:
            graded = sealed.hashes.get(item.question, "")
            if not decisions.holds(graded, decisions.judged(files)["hashes"], item.question):
                continue  # changed since it was graded: not what is being judged
        shown = what_ran(files, item.question)
        if shown is not None and (shown.bindings or shown.note):
            return shown, where
        return None, f"no function {item.question} in {where}"
    graded = sealed.hashes.get(item.question, "") if sealed else ""
    if graded and not graded.startswith(decisions.CODE_RULE) and candidates:
        return None, (
            "graded by an earlier grader, whose record cannot tell this code from a changed "
            "one: grade it again (mha-grade batch --regrade, or one) to see it here"
        )
    return None, f"the code as graded is not at hand (submission: {item.source or 'unknown'})"


# -- the queue --------------------------------------------------------------------------------


class Queue:
    def __init__(
        self,
        out: Path,
        items: list[Item],
        reviewer: str,
        console: Console | None = None,
    ):
        self.out = as_folder(out)
        self.reviewer = reviewer
        self.console = console or Console(highlight=False)
        self.skipped: list[str] = self._load_state()
        self.items = self._resume_order(items)
        self.pos = 0
        self.decided_now: set[str] = set()  # items decided in this session
        self.skipped_now: set[str] = set()

    # -- state kept between sessions --

    def _load_state(self) -> list[str]:
        try:
            data = json.loads(self.out.queue_state.read_text())
            return [k for k in data.get("skipped", []) if isinstance(k, str)]
        except (OSError, ValueError, AttributeError):
            return []

    def _save_state(self) -> None:
        write_atomic(self.out.queue_state, json.dumps({"skipped": self.skipped}) + "\n")

    def _resume_order(self, items: list[Item]) -> list[Item]:
        """Items skipped before come last, in the order they were skipped."""
        later = {k: i for i, k in enumerate(self.skipped)}
        first = [it for it in items if not (it.open and it.key in later)]
        last = sorted(
            (it for it in items if it.open and it.key in later), key=lambda it: later[it.key]
        )
        return first + last

    # -- the loop --

    def run(self) -> int:
        if not self.items:
            self.console.print("Nothing to review: no flagged answer is waiting for a person.")
            return 0
        try:
            while 0 <= self.pos < len(self.items):
                if not self._step(self.items[self.pos]):
                    break
            else:
                self.console.print(Rule("end of the queue"))
        except (EOFError, KeyboardInterrupt):
            self.console.print()
        self._finish()
        return 0

    def _left(self) -> int:
        return sum(it.open for it in self.items)

    def _ask(self, prompt: str) -> str:
        return self.console.input(Text(prompt))

    def _step(self, item: Item) -> bool:
        """Show one item and act on what is typed; False to quit."""
        self._show(item)
        while True:
            typed = self._ask("score> ")
            command = typed.strip().lower()
            if command in ("q", "quit", "exit"):
                return False
            if command in ("?", "h", "help"):
                self.console.print(Text(HELP))
                continue
            if command in ("s", "skip"):
                if item.open and item.key not in self.skipped:
                    self.skipped.append(item.key)
                    self._save_state()
                self.skipped_now.add(item.key)
                self.pos += 1
                return True
            if command in ("b", "back"):
                if self.pos == 0:
                    self.console.print("This is the first item.")
                    continue
                self.pos -= 1
                return True
            if command in ("c", "clear"):
                if item.decision is None:
                    self.console.print("No decision on this item to clear.")
                    continue
                self._decide(item, None, "")
                self._show(item)
                continue
            if not command:
                if item.decision is not None:  # revisited: keep what was decided
                    self.pos += 1
                    return True
                score, note = item.grader_score, ""
            else:
                try:
                    score = parse_score(typed, item.max_score)
                except ValueError as e:
                    self.console.print(Text(f"{e}. Type ? for help.", style="red"))
                    continue
                note = self._ask("note for the student (Enter for none)> ").strip()
            self._decide(item, score, note)
            self.pos += 1
            return True

    def _decide(self, item: Item, score: float | None, note: str) -> None:
        decision, _, _ = apply.record(
            self.out, item.student, item.question, score, note, self.reviewer
        )
        item.decision = decision
        if decision is not None:
            item.previous = None
            self.decided_now.add(item.key)
            if item.key in self.skipped:
                self.skipped.remove(item.key)
                self._save_state()
            self.console.print(
                Text(
                    f"Saved: {item.student} {item.question} "
                    f"{points(decision.score)} / {points(item.max_score)}",
                    style="green",
                )
            )
        else:
            self.console.print(Text("Decision cleared: the grader's score stands.", style="yellow"))

    def _finish(self) -> None:
        left = self._left()
        now = {it.key: it for it in self.items}
        decided = sum(not now[k].open for k in self.decided_now)
        skipped = sum(now[k].open for k in self.skipped_now)
        self.console.print(
            f"{decided} decided and {skipped} skipped in this session; "
            f"{left} item{'s' if left != 1 else ''} left."
        )
        if left:
            self.console.print("Run the same command again to go on where you stopped.")
        build_summary(self.out, plots=self.out.plots.is_dir())
        self.console.print(f"Decisions: {self.out.reviews_toml}")

    # -- one item on the screen --

    def _show(self, item: Item) -> None:
        c = self.console
        if c.is_terminal:
            c.clear()
        n = len(self.items)
        c.print(
            Rule(
                f"review · item {self.pos + 1} of {n} · {self._left()} left",
                style="cyan",
            )
        )
        kind = "written answer" if item.question in WRITTEN_QUESTIONS else "code"
        c.print(
            Text.assemble(
                (item.student, "bold"),
                " · ",
                (item.question, "bold"),
                f" ({kind}, {points(item.max_score)} points) · ",
                (item.reason(), "yellow"),
            )
        )
        c.print(Text("Question", style="bold underline"))
        c.print(Padding(Text(question_text(item.question)), (0, 0, 0, 2)))
        if item.question in WRITTEN_QUESTIONS:
            self._show_written(item)
        else:
            self._show_code(item)
        self._show_decision(item)
        c.print(self._keys(item), style="dim")

    def _show_written(self, item: Item) -> None:
        c = self.console
        try:
            asks = rubric_asks(item.question)
        except Exception:  # a broken rubric must not stop the review
            asks = []
        if asks:
            c.print(Text("What the rubric asks", style="bold underline"))
            for pts, idea in asks:
                c.print(Text(f"  {points(round(pts, 2)):>5} pts  {idea}"))
        answer = item.answer
        if answer is None:
            body = Text("(no section for this question in answers.md)", style="italic")
        elif not answer.strip():
            body = Text("(not attempted: only the placeholder)", style="italic")
        else:
            shown = plain(answer)
            body = Text(shown[:MAX_ANSWER])
            if len(shown) > MAX_ANSWER:
                body.append(f"\n… {len(shown) - MAX_ANSWER} more characters", style="italic")
        words = len(answer.split()) if answer else 0
        c.print(Panel(body, title=f"the student's answer ({words} words)", title_align="left"))
        self._show_grader(item)

    def _show_code(self, item: Item) -> None:
        c = self.console
        shown, where = code_of(self.out, item)
        if shown is not None:
            if shown.note:
                c.print(Text(plain(shown.note), style="yellow"))
            parts: list = []
            room = MAX_CODE_LINES
            for b in shown.bindings:
                if len(shown.bindings) > 1:
                    ran = " (what ran)" if b is shown.ran else ""
                    parts.append(Text(f"line {b.line}, {_kinds(b)}{ran}:", style="bold cyan"))
                lines = plain(b.source).splitlines()
                parts.append(Syntax("\n".join(lines[:room]), "python", word_wrap=True))
                if len(lines) > room:
                    parts.append(Text(f"… {len(lines) - room} more lines", style="italic"))
                room = max(room - len(lines), 5)
            for name, b in shown.named:
                parts.append(Text(f"line {b.line}, {name}, which it names:", style="bold cyan"))
                lines = plain(b.source).splitlines()
                parts.append(Syntax("\n".join(lines[:room]), "python", word_wrap=True))
            title = f"the student's {item.question} ({where})"
            c.print(Panel(Group(*parts), title=title, title_align="left"))
        else:
            c.print(Text(where, style="italic"))
        self._show_grader(item)

    def _show_grader(self, item: Item) -> None:
        c = self.console
        c.print(
            Text(
                f"The grader: {points(item.grader_score)} / {points(item.max_score)}",
                style="bold underline",
            )
        )
        said = ""
        for r in item.cases:
            name = r.name.removeprefix(f"{item.question}: ") or r.name
            mark = "passed" if r.passed else f"{points(r.score)} / {points(r.max_score)}"
            flag = "  [flagged]" if Tag.NEEDS_REVIEW in r.tags else ""
            c.print(Text(f"  {name}: {mark}{flag}"))
            output = plain(r.output).strip()
            if output and output != "passed":
                text = "(the same as above)" if output == said else output
                c.print(Padding(Text(text, style="dim"), (0, 0, 0, 4)))
                said = output

    def _show_decision(self, item: Item) -> None:
        pts = points
        for label, d in (("Decided", item.decision), ("Earlier decision", item.previous)):
            if d is None:
                continue
            line = f"{label}: {pts(d.score)} / {pts(item.max_score)} by {d.reviewer or '?'} on "
            line += f"{d.decided:%Y-%m-%d %H:%M} UTC"
            if label == "Earlier decision":
                line += " (on a version of the answer that has changed since)"
            if d.note:
                line += f"; note: {plain(d.note)}"
            self.console.print(Text(line, style="green" if d is item.decision else "yellow"))

    def _keys(self, item: Item) -> Text:
        top = points(item.max_score)
        if item.decision is not None:
            enter = f"Enter keeps {points(item.decision.score)} · c clears"
        else:
            enter = f"Enter accepts the grader's {points(item.grader_score)}"
        return Text(f"score 0-{top} · {enter} · s skip · b back · q quit · ? help")
