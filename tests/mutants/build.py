"""Turn the bug modules' functions into submissions: sources, folders, and proxied envs."""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mha_check.questions import CODE_QUESTIONS
from mha_grader.grading import direct
from mha_grader.paths import SOLUTIONS

from . import crosscheck_bugs, multihead_bugs
from .registry import ENTRIES, Entry

_HEADER = "\n\n# --- replaced by the mutation suite ---\nimport math\n\nimport numpy as np\n"


@dataclass(frozen=True)
class Submission:
    name: str
    ids: tuple[str, ...]
    blame: str | None
    affects: tuple[str, ...]
    files: dict[str, str]  # file name -> source

    def write(self, folder: Path, answers: str | None = None) -> Path:
        """Write the submission as a student folder (answers.md from the reference)."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).write_text(text)
        (folder / "answers.md").write_text(answers or (SOLUTIONS / "answers.md").read_text())
        return folder


def _source(func: Callable, rename: bool) -> str:
    lines = textwrap.dedent(inspect.getsource(func)).splitlines()
    lines = [line for line in lines if not line.startswith("@")]
    text = "\n".join(lines) + "\n"
    if rename:
        text = re.sub(r"^def (\w+?)__\w+\(", r"def \1(", text, count=1)
    return text


def _helpers(module: types.ModuleType) -> str:
    """The module's private helpers, which the buggy functions may call."""
    funcs = [
        f
        for name, f in vars(module).items()
        if name.startswith("_") and inspect.isfunction(f) and f.__module__ == module.__name__
    ]
    return "\n\n".join(_source(f, rename=False) for f in funcs)


def _submission(entry: Entry) -> Submission:
    module = sys.modules[entry.func.__module__]
    target = entry.func.__name__.split("__")[0]
    file = CODE_QUESTIONS[target]
    files = {f: (SOLUTIONS / f).read_text() for f in ("multihead.py", "crosscheck.py")}
    extra = _HEADER + ("import torch\n" if file == "crosscheck.py" else "")
    files[file] += extra + "\n\n" + _helpers(module) + "\n\n" + _source(entry.func, rename=True)
    return Submission(entry.func.__name__, entry.ids, entry.blame, entry.affects, files)


assert multihead_bugs and crosscheck_bugs  # imported for their registrations
SUBMISSIONS: list[Submission] = [_submission(e) for e in ENTRIES]
BY_NAME: dict[str, Submission] = {s.name: s for s in SUBMISSIONS}


def load_env(sub: Submission) -> dict[str, Callable]:
    """The submission's contract functions, each behind direct.proxy (sandbox semantics)."""
    mh = types.ModuleType("multihead")
    exec(compile(sub.files["multihead.py"], "multihead.py", "exec"), mh.__dict__)
    saved = sys.modules.get("multihead")
    sys.modules["multihead"] = mh  # crosscheck.py does `from multihead import ...`
    try:
        cc = types.ModuleType("crosscheck")
        exec(compile(sub.files["crosscheck.py"], "crosscheck.py", "exec"), cc.__dict__)
    finally:
        if saved is None:
            del sys.modules["multihead"]
        else:
            sys.modules["multihead"] = saved
    return direct.bind(
        {
            q: direct.proxy(getattr(mh if file == "multihead.py" else cc, q))
            for q, file in CODE_QUESTIONS.items()
        }
    )


def reference_env(**overrides: Callable) -> dict[str, Callable]:
    """The reference functions behind direct.proxy, with some replaced.

    The reference functions are rebound so that they call the replacements, as a student's
    attention calls the student's own softmax.
    """
    from solutions import crosscheck, multihead

    def rebind(module: types.ModuleType, extra: dict) -> dict:
        scope = {**vars(module), **extra}
        for q in CODE_QUESTIONS:
            f = scope.get(q)
            if q not in extra and inspect.isfunction(f) and f.__module__ == module.__name__:
                scope[q] = types.FunctionType(
                    f.__code__, scope, f.__name__, f.__defaults__, f.__closure__
                )
        return scope

    mh = rebind(multihead, {q: f for q, f in overrides.items() if q in vars(multihead)})
    cc_over = {q: f for q, f in overrides.items() if CODE_QUESTIONS[q] == "crosscheck.py"}
    cc = rebind(crosscheck, {"multi_head_attention": mh["multi_head_attention"], **cc_over})
    return direct.bind(
        {
            q: direct.proxy((mh if file == "multihead.py" else cc)[q])
            for q, file in CODE_QUESTIONS.items()
        }
    )
