"""Import the student's multihead.py and crosscheck.py, turning every failure into one sentence."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .limits import TimeLimitExceeded, call_limits, captured_output, limit_note
from .tracing import describe, exception_text, student_frame


@dataclass
class LoadedFile:
    """One student file: the module, or why it could not be loaded (a sentence for the student)."""

    name: str  # "multihead.py"
    module: ModuleType | None = None
    problem: str | None = None
    output: str = ""  # what the file printed while being imported


def _syntax_problem(name: str, e: SyntaxError) -> str:
    where = f"line {e.lineno}" if e.lineno else "somewhere"
    text = f"{name} has a syntax error at {where}: {e.msg}."
    if e.text and e.text.strip():
        text += f" The line reads: {e.text.strip()}"
    return text + " Python cannot run any of the file until this is fixed."


def _import_problem(
    name: str, e: BaseException, folder: Path, loaded: dict[str, LoadedFile], shown: Path
) -> str:
    if isinstance(e, TimeLimitExceeded):
        return (
            f"{name} did not finish loading within the time limit: code at the top level of the "
            "file runs on import; is there an endless loop (or a long experiment) outside any "
            "function? Move experiments under `if __name__ == '__main__':`."
        )
    frame = student_frame(e, folder)
    at = f" (at {describe(frame)})" if frame else ""
    if isinstance(e, ImportError) and e.name in ("multihead", "crosscheck"):
        other = f"{e.name}.py"
        if other in loaded and loaded[other].problem:
            return f"{name} imports {other}, which could not be loaded (see {other}'s problem)."
        if not (folder / other).is_file():
            return f"{name} imports {other}, which is not in {shown}."
    if isinstance(e, ImportError) and str(e).startswith(f"{name} imports "):
        return f"{e}{at}."  # the import rule (imports.py), already in words
    if isinstance(e, ImportError):
        return f"{name} could not import what it needs: {exception_text(e)}{at}."
    if isinstance(e, SystemExit):
        return f"{name} called exit() or sys.exit() while being imported{at}."
    return (
        f"{name} raised {exception_text(e)} while being imported{at}{limit_note(e)}. Code at "
        "the top level of the file runs on import."
    )


def load_student_files(
    folder: Path, names: list[str], seconds: float | None, shown: Path | None = None
) -> dict[str, LoadedFile]:
    """Load the student's files named in `names` ("multihead.py", "crosscheck.py"), in order.

    The student's folder goes first on sys.path, so crosscheck.py's `from multihead import ...`
    finds the student's own multihead.py (the very module loaded here). ``shown``: the folder
    named in messages, when the files are loaded from a copy of it.
    """
    folder = folder.resolve()
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    for stale in ("multihead", "crosscheck"):
        sys.modules.pop(stale, None)
    loaded: dict[str, LoadedFile] = {}
    for name in names:
        loaded[name] = _load_one(folder, name, seconds, loaded, shown or folder)
        if loaded[name].module is None:
            # `import multihead` elsewhere now finds a stand-in whose functions fail when called
            # (as grading's worker has it), instead of running a broken or hanging file again
            # or finding some other multihead on sys.path: crosscheck.py still loads, and its
            # functions that do not call multihead.py's are checked.
            sys.modules[Path(name).stem] = _stand_in(name)
    return loaded


def _stand_in(name: str) -> ModuleType:
    module = ModuleType(Path(name).stem)

    def unavailable(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)

        def stub(*args: object, **kwargs: object) -> object:
            raise ImportError(f"{name} could not be loaded, so {attr} is not available")

        stub.__name__ = attr
        return stub

    module.__getattr__ = unavailable  # type: ignore[method-assign]
    module.__file__ = None
    module.loaded = False  # type: ignore[attr-defined]
    return module


def _load_one(
    folder: Path, name: str, seconds: float | None, loaded: dict[str, LoadedFile], shown: Path
) -> LoadedFile:
    path = folder / name
    result = LoadedFile(name)
    if not path.is_file():
        result.problem = f"{name} is missing: there is no {name} in {shown}."
        return result
    try:
        source = path.read_bytes()
        compile(source, str(path), "exec")
    except SyntaxError as e:  # also IndentationError and TabError
        result.problem = _syntax_problem(name, e)
        return result
    except (OSError, ValueError) as e:  # unreadable, or a NUL byte in the file
        result.problem = f"{name} could not be read: {exception_text(e)}."
        return result
    module_name = path.stem
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    with captured_output() as out:
        try:
            with call_limits(seconds):
                spec.loader.exec_module(module)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # the student's file may raise anything, even SystemExit
            sys.modules.pop(module_name, None)
            result.problem = _import_problem(name, e, folder, loaded, shown)
        else:
            result.module = module
    result.output = out.getvalue()
    return result
