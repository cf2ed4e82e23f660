"""The one door between grading and what a student reads.

Everything that reaches a student from grading (``feedback.md``, every test output and the
top-level output of ``results.json``) is written in the grader's words with the helpers below,
and passes ``for_report`` on its way out. The rules, in one place:

1. **Student-written text** (what a file printed while it was imported, an import error, a line
   quoted from a submitted file) is shown only when it cannot carry a hidden input: the first
   imports run before any hidden input exists in the worker, and quoted lines are read from the
   submitted file on this side, never from the worker. It is shown with control characters and
   terminal escapes removed (``mha_check.text.strip_controls``) and Markdown/HTML escaped, so it
   reads as written and cannot add headings, links, images or markup to a report.
2. **Nothing a student's code produces during the hidden tests is echoed**: not an exception's
   message or class name, not printed output, not a number computed from a returned value.
   A failed call is told by the kind of exception (Python's builtin or NumPy's own class by its
   name, from fixed lists the grader holds, else "an exception of your own class") and where it
   was raised (``Door``); a returned value by its type, dtype and
   how its shape compares with the expected one (``value``, ``shape_difference``); a wrong
   result by which share of entries is off and by how much, in a few fixed classes
   (``portion``, ``error_size``). Hidden inputs and expected values are never in a message;
   values appear only for the diagnosis' own probe inputs, whose shapes are shown in full.
3. **What a student's code can still choose** is a few words from fixed lists per hidden case:
   pass or fail, which check failed, one of the classes above, a builtin or NumPy exception's
   name (at most ``Door.MAX_KINDS`` different ones beyond those seen on public inputs), and
   whether it
   raised at a line where it also raises on the grader's own public input. A line number is
   named only in that last case (``Door``): a few bits per case, each case with other inputs,
   which is not enough to rebuild any input value.

``mha-check`` runs on public inputs only, so it shows a student their own messages (with
``strip_controls`` applied); the grader never does.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mha_check.text import strip_controls

OWN_CLASS = "an exception of your own class"
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
)
# The names of NumPy's own exception classes (numpy.exceptions, numpy.linalg, its ufunc and
# memory errors): the worker names one only when the class raised *is* NumPy's (it compares
# identities, sandbox/worker/origin.py), and only a name in this list is ever shown.
NUMPY_EXCEPTIONS = frozenset(
    {"AxisError", "LinAlgError", "UFuncTypeError", "DTypePromotionError", "TooHardError"}
    | {"MemoryError", "ComplexWarning", "RankWarning", "VisibleDeprecationWarning"}
    | {"ModuleDeprecationWarning"}
)
MAX_CODE = 120  # characters of a quoted source line
MAX_STUDENT_TEXT = 4000  # characters of import output or an import error shown

# Characters that Markdown (CommonMark) or HTML may read as markup. A backslash before any ASCII
# punctuation shows it as itself; the rest of the text is left as written.
_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&\"'=:;^$%@/?,])")
_WHERE = re.compile(r"(?P<file>multihead\.py|crosscheck\.py), line (?P<line>[0-9]{1,7})(?::|$)")


# -- text a student wrote ---------------------------------------------------------------------


def escape(text: str, limit: int = MAX_STUDENT_TEXT) -> str:
    """Student-written text as it should read inside a Markdown report: no control characters,
    every markup character escaped, lines joined by Markdown line breaks, at most ``limit``."""
    text = strip_controls(text)
    cut = len(text) > limit
    text = _MARKUP.sub(r"\\\1", text[:limit])
    lines = [line.strip() for line in text.split("\n")]
    return "  \n".join(line for line in lines if line) + (" …" if cut else "")


def code_block(text: str, limit: int = MAX_STUDENT_TEXT) -> str:
    """Student output as a fenced code block that nothing in it can close (the fence is longer
    than any run of backticks inside, as CommonMark requires), control characters removed."""
    text = strip_controls(text)[:limit].rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def inline_code(text: str) -> str:
    """A short text as an inline code span that nothing in it can close."""
    text = " ".join(strip_controls(text).split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}" if text else ""


def for_report(text: str) -> str:
    """The last step before anything is written to a report: control characters removed.
    (Everything in it was already written by the grader or escaped by the helpers above.)"""
    return strip_controls(text)


# -- what a call into student code ended in --------------------------------------------------


def exception_kind(type_name: str, mro: Sequence[str], numpy: str = "") -> str:
    """Where the exception's class comes from, with its name when that is one the grader owns:
    "NumPy's AxisError" (``numpy``: the worker's name for NumPy's class, "" when the class is
    not NumPy's), "Python's ValueError" (a builtin), else OWN_CLASS: a class of the student's
    own (whatever it is called, even after a builtin or one of NumPy's) never gets its name
    shown."""
    if numpy in NUMPY_EXCEPTIONS:
        return f"NumPy's {numpy}"
    if type_name in BUILTIN_EXCEPTIONS and mro and mro[0] == type_name:
        return f"Python's {type_name}"
    return OWN_CLASS


def place_text(file: str, line: int, code: str) -> str:
    """'multihead.py, line 12: `return x[i]`' (``code`` as read from the submitted file)."""
    code = code.strip()
    if len(code) > MAX_CODE:
        code = code[: MAX_CODE - 1] + "…"
    return f"{file}, line {line}: {inline_code(code)}" if code else f"{file}, line {line}"


class Door:
    """What may be said about where and how a submission's code raised.

    Before any hidden test runs, the engine calls each function once on the diagnosis' first
    probe (``public=True`` calls): what it raises there cannot depend on a hidden input, so
    its kind and place are *public*. During the hidden tests a place is named only when it is
    one of the function's public places: any other line number could be chosen by code that
    has seen the hidden inputs, to spell them out line by line. Kinds are builtin names; those
    not seen on a public probe are named for at most ``MAX_KINDS`` different kinds per
    submission ("another exception" after that). The text of a named line is read here, from
    the submitted file; the worker only says which file and line.
    """

    MAX_KINDS = 3

    def __init__(self, sources: Mapping[str, str] | None = None):
        self._lines = {name: text.splitlines() for name, text in (sources or {}).items()}
        self._public: dict[str, set[tuple[str, object]]] = {}  # func -> {("kind"|"at", ...)}
        self._kinds: set[str] = set()  # kinds named outside public calls

    def _locate(self, reported: str) -> tuple[str, int] | None:
        """(file, line) of the worker's "multihead.py, line 12: ..." when that line exists
        and holds code; anything after the line number is ignored."""
        m = _WHERE.match(reported or "")
        if m is None or m["file"] not in self._lines:
            return None
        line = int(m["line"])
        lines = self._lines[m["file"]]
        if not 1 <= line <= len(lines) or not lines[line - 1].strip():
            return None
        return m["file"], line

    def _named(self, file: str, line: int) -> str:
        return place_text(file, line, self._lines[file][line - 1])

    def place(self, reported: str) -> str:
        """The place of an error while importing (no hidden input exists yet)."""
        at = self._locate(reported)
        return self._named(*at) if at else ""

    def raised(
        self,
        func: str,
        type_name: str,
        mro: Sequence[str],
        reported: str,
        public: bool,
        numpy: str = "",
    ) -> tuple[str, str]:
        """(kind, place) to show for a call of ``func`` that raised (``numpy``: the worker's
        name for NumPy's class, see ``exception_kind``)."""
        kind = exception_kind(type_name, mro, numpy)
        at = self._locate(reported)
        seen = self._public.setdefault(func, set())
        if public:
            seen.add(("kind", kind))
            if at:
                seen.add(("at", at))
            return kind, self._named(*at) if at else ""
        if ("kind", kind) not in seen and kind != OWN_CLASS and kind not in self._kinds:
            if len(self._kinds) >= self.MAX_KINDS:
                kind = "another exception"
            else:
                self._kinds.add(kind)
        file = (at or ("",))[0] or _file_of(reported)
        if at and ("at", at) in seen:
            return kind, self._named(*at) + ", as on our own test input"
        if any(k == "at" for k, _ in seen):
            return kind, f"in {file or 'your code'}, at another line than on our own test input"
        return kind, f"in {file}" if file else ""


def _file_of(reported: str) -> str:
    m = _WHERE.match(reported or "")
    return m["file"] if m else ""


def raised_text(kind: str, place: str) -> str:
    """'raised ValueError (multihead.py, line 12: `...`)'."""
    return f"raised {kind}" + (f" ({place})" if place else "")


# -- what a returned value was ---------------------------------------------------------------


def count(n: int) -> str:
    """A count a student's code chose (list lengths, pairs): exact up to nine, then "many"."""
    return str(n) if 0 <= n <= 9 else "more than 9"


def _axes(ndim: int) -> str:
    if ndim == 0:
        return "no axes (a single number)"
    return "1 axis" if ndim == 1 else f"{count(ndim)} axes"


def inputs(args: Sequence[Any]) -> str:
    """The grader's own inputs of a call, by shape: an array's shape (never its values), "a
    number" for a number, a torch module as such."""
    parts = []
    for a in args:
        if type(a) is np.ndarray:
            parts.append(f"an array of shape {tuple(int(d) for d in a.shape)}")
        elif type(a) in (int, float, bool) or isinstance(a, np.generic):
            parts.append("a number")
        elif type(a).__name__ == "MultiheadAttention":
            parts.append("a MultiheadAttention module")
        else:
            parts.append(f"a {type(a).__name__}" if type(a) in (list, tuple, dict) else "a value")
    return ", ".join(parts)


def value(v: Any) -> str:
    """What came back, by kind only: type, dtype, number of axes or items; never a value."""
    t = type(v)
    if v is None:
        return "None (is a `return` missing?)"
    if t is np.ndarray:
        return f"a NumPy {v.dtype} array with {_axes(v.ndim)}"
    if t.__module__.startswith("torch"):
        return "a torch tensor"
    if t in (list, tuple, dict):
        items = "key" if t is dict else "item"
        n = len(v)
        return f"a {t.__name__} of {count(n)} {items}{'' if n == 1 else 's'}"
    if t is str:
        return "a string"
    name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    return f"a value of type {name}"


def _names(shape_words: str, ndim: int) -> list[str] | None:
    """Axis names from the contract's shape words, e.g. "(num_heads, n, d_head)"; None when the
    words are not a tuple of ``ndim`` names ("(..., n, m)" names the trailing axes only)."""
    inner = shape_words.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        return None
    parts = [p.strip() for p in inner[1:-1].split(",")]
    if parts and parts[0] == "...":
        rest = parts[1:]
        if ndim < len(rest):
            return None
        return ["a leading axis"] * (ndim - len(rest)) + rest
    return parts if len(parts) == ndim else None


def shape_difference(
    got: tuple[int, ...], want: tuple[int, ...], shape_words: str = "", public: bool = False
) -> str:
    """How the shape ``got`` differs from ``want``, in words that show no length the student's
    code chose; the expected lengths themselves only when ``public`` (a probe's shape)."""
    want_text = str(tuple(want)) if public else (shape_words or "the expected shape")
    if len(got) != len(want):
        return f"an array with {_axes(len(got))}, where {want_text} has {_axes(len(want))}"
    names = _names(shape_words, len(want)) if shape_words else None
    if sorted(got) == sorted(want):
        if public:
            return f"shape {tuple(got)}: the lengths of {want_text} in another order"
        if names:
            unused = list(range(len(want)))
            order = []
            for g in got:
                i = next(i for i in unused if want[i] == g)
                unused.remove(i)
                order.append(names[i])
            return f"the right lengths in another order, as if ({', '.join(order)})"
        return "the right lengths, in another order"
    wrong = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g != w]
    labels = [f"axis {i}" + (f" ({names[i]})" if names else "") for i in wrong]
    which = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    verb = "has" if len(labels) == 1 else "have"
    return f"an array whose {which} {verb} another length than in {want_text}"


def portion(bad: int, total: int, state: str) -> str:
    """Which share of a result's entries is in ``state`` ("off", "nan or infinite"), in four
    classes: every, most, one, some (the exact count could be chosen to spell out an input)."""
    if total and bad == total:
        return f"every entry is {state}" if total > 1 else f"its only entry is {state}"
    if bad == 1:
        return f"one entry is {state}"
    return f"{'most' if 2 * bad > total else 'some'} entries are {state}"


def error_size(err: float, scale: float) -> str:
    """How far off a result is, relative to the expected result's largest magnitude, in three
    classes (the exact size could be chosen by the student's code to spell out an input)."""
    rel = err / scale if scale > 0 else err
    if rel < 1e-3:
        return (
            "by less than 0.1% of the result's largest entry: a small difference, from a "
            "formula that differs slightly on these values (a cap on the scores, say) or from "
            "arithmetic less precise than asked (float64 results may be off by 1e-8 of it, "
            "float32 ones by 1e-4)"
        )
    if rel < 0.1:
        return "by up to 10% of the result's largest entry"
    return "by more than 10% of the result's largest entry"


def spread(bad_per_index: Sequence[bool], label: str) -> str:
    """'in every head' / 'in some heads, not all' for the leading axis called ``label``."""
    if not bad_per_index or not any(bad_per_index):
        return ""
    if all(bad_per_index):
        return f"in every {label}" if len(bad_per_index) > 1 else ""
    return f"in some {label}s, not all"
