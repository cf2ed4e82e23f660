"""Similar submissions: which students of a class share enough code to be worth a look, and whose
code is not all in its text.

The comparison is copydetect's (winnowing over tokens, MOSS's method; offline): every file is
reduced to its tokens with names replaced by ``V``, function names by ``F`` and strings by ``S``
(so renaming variables changes nothing), comments and layout dropped, and what a student can add
or leave out without changing what the code does (docstrings, type hints that are only types,
``pass``, parentheses around a whole value, the module before a dotted name: ``np.exp`` is
``exp``, as after ``from numpy import *``) dropped too; every run of ``K``
characters of that reduced text is hashed; the hashes of the handed-out stubs are boilerplate
and never count; two files match where they share hashes, and copydetect turns the shared
hashes into matched stretches of each file (``compare_files``) and highlights them in the raw
code (``highlight_overlap``). Hashes are order-free, so reordering functions changes nothing.

What is compared is the code Python runs, not the file's text as it looks (``read_code``):
the text as the interpreter decodes it (a coding declaration such as ``utf-7`` can turn a
comment into code), line endings made one (a file with ``\\r`` alone ends its lines as Python
does), comments and layout stripped before any size bound (a long comment costs nothing), the
statement separators and trailing commas Python lets a student add or leave out dropped. A
file that builds code at run time (``exec``, ``eval``, ``compile``, ``__import__``,
``importlib``, a blob decoded with ``base64``, ``zlib``, ``codecs``, type hints evaluated by
``typing.get_type_hints``, a string type hint that is not a type...: ``runtime_reasons``)
is listed for a person whatever it is similar to, and the code it holds as text, where simple
folding and decoding reach it (``built_code``), is compared with the rest of the file. A file
that calls small functions of its own (a function that only names values and returns one) is
also compared with each call written in place (``inlined_code``): code split into many small
functions, one statement each, shares no k-gram with the code it was split from.

Four things are listed, each a reason to read, never evidence of copying on its own:

- **pairs**: each of the two has at least ``THRESHOLD`` of its own code in common with the
  other, or one has at least ``CONTAIN`` of its code in the other (a copy padded with code of
  its own), counting code that at most ``common_limit`` submissions hold;
- **the same code**: submissions whose reduced code is the same (names, comments, layout and
  the order of top-level statements set aside), whatever the class size;
- **shared code**: three or more submissions whose code is mostly code that more than
  ``common_limit`` submissions hold, and that share most of it with one another (a leaked
  solution in many copies), reported as a group rather than dropped as common;
- **code built at run time**: files whose code is not all in their text.

Two things are done here rather than by copydetect, for speed and for reproducible reports:
the reduction to tokens uses one regular expression instead of pygments' Python lexer (which
costs ~25 ms a file, more than grading the whole submission; the reduced text has the same
text, see ``reduce_code``), and k-grams are hashed with a fixed polynomial hash (copydetect
uses Python's ``hash``, salted per process, so two runs would pick different fingerprints).
To keep a class of 1,000 linear, pairs are first screened by a sample of their fingerprints
(those whose hash is 0 modulo ``SAMPLE``); copydetect then compares only the screened pairs.
Code that more than ``common_limit`` submissions share is left out of pairs: common idioms (a
max-shifted softmax) are not evidence of anything; it is looked at again for groups only.
"""

from __future__ import annotations

import ast
import base64
import binascii
import builtins
import bz2
import codecs
import copy
import functools
import hashlib
import html
import importlib.util
import json
import keyword
import lzma
import re
import unicodedata
import warnings
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from ..paths import EXERCISES
from .folder import CODE_FILES, OutputFolder, as_folder, write_atomic

# Calibrated on independently written solutions (tests/test_similarity.py; the figures are in
# benchmarks/README.md): with copydetect's default K = 25 they share 50-60% of their code (this
# exercise's correct code converges); with 40 (on code reduced without docstrings, type hints
# and module prefixes) at most 39%, while renamed and reordered copies keep 76% or more.
K = 40  # copydetect's noise threshold: matches shorter than K reduced characters never count
SAMPLE = 8  # screening keeps fingerprints whose hash is 0 mod SAMPLE (about 1 in 8)
SCREEN = 0.8  # ... and passes pairs whose samples overlap by this share of the threshold
THRESHOLD = 0.65  # a pair: each of the two has at least this share of its own code in common
CONTAIN = 0.85  # ... or one of the two has at least this share of its own code in the other
MIN_MATCH = 300  # ... and the shared code is at least this many reduced characters long
CONTAIN_MIN = 600  # ... (a contained one: at least this many of its own reduced characters)
GROUP_MIN = 3  # shared code is reported for groups of at least this many submissions
COHESION = 0.5  # ... who are most of the holders of most of the code they share
MAX_REDUCED = 100_000  # reduced characters compared per file; a longer file is also listed
MAX_BUILT = 200_000  # characters of code decoded from one file's text (built_code)
DECODE_WORK = 10_000_000  # ... and characters it may transform looking for it
SHOWN = 50  # pairs listed in the HTML report (the summary lists fewer)

# -- the code Python runs --------------------------------------------------------------------


def read_code(text: str) -> str:
    """``text`` as the interpreter reads the file grading writes from it (UTF-8 bytes): decoded
    by its coding declaration, with universal newlines (``\\r\\n`` and ``\\r`` end lines as
    ``\\n`` does). A declaration Python refuses leaves the text with its newlines made one."""
    try:
        return importlib.util.decode_source(text.encode("utf-8", "surrogatepass"))
    except (SyntaxError, UnicodeError, LookupError, ValueError):
        return text.replace("\r\n", "\n").replace("\r", "\n")


# Names that turn text into code, or reach what does (the interpreter's namespaces, frames,
# code objects, modules that run text), wherever they stand outside strings and comments. A
# builtin after "." is someone's method (torch's ``module.eval()``), so those count bare only.
_BUILTINS_RUNNING = frozenset(
    {"exec", "eval", "compile", "__import__", "breakpoint", "globals", "locals", "vars"}
    | {"setattr", "delattr", "execfile", "reload"}
)
_ROUTES = frozenset(
    # modules and functions that run or load text as code, or reach the namespaces that do
    {"builtins", "importlib", "imp", "runpy", "pickle", "cPickle", "dill", "marshal", "shelve"}
    | {"ctypes", "cffi", "inspect", "sys", "subprocess", "gc", "pdb", "timeit", "cProfile"}
    | {"doctest", "pydoc", "codeop", "zipimport", "pkgutil", "attrgetter", "methodcaller"}
    # frames and code objects
    | {"f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame", "gi_frame"}
    | {"cr_frame", "ag_frame", "_getframe", "co_code", "CodeType", "FunctionType"}
    | {"LambdaType", "MethodType"}  # types' other names that build or bind functions
    # NumPy's and torch's ways of loading or compiling code
    | {"load", "loads", "load_inline", "cpp_extension", "jit", "hub", "f2py", "ctypeslib"}
    | {"_C", "_dynamo", "allow_pickle", "read_array", "weights_only", "load_library"}
    | {"distutils", "extbuild", "build_and_import_extension"}
    # what evaluates type hints, strings included, as code (typing.get_type_hints, a ForwardRef,
    # functools.singledispatch's register, annotationlib, inspect's eval_str)
    | {"get_type_hints", "ForwardRef", "_eval_type", "_evaluate", "evaluate_forward_ref"}
    | {"get_annotations", "annotationlib", "call_evaluate_function", "call_annotate_function"}
    | {"singledispatch", "singledispatchmethod", "eval_str"}
)
_DECODERS = frozenset(
    {"base64", "binascii", "codecs", "zlib", "gzip", "bz2", "lzma", "zipfile", "tarfile"}
    | {"fromhex", "unhexlify", "b64decode", "b32decode", "b16decode", "b85decode"}
    | {"a85decode", "decodebytes", "standard_b64decode", "urlsafe_b64decode", "decompress"}
    | {"rot13", "rot_13", "a2b_base64", "a2b_hex"}
)
# What plain numerical code imports; any other module is named (it may run or reach code).
_PLAIN_MODULES = frozenset(
    {"numpy", "torch", "multihead", "math", "cmath", "numbers", "itertools", "functools"}
    | {"operator", "collections", "typing", "typing_extensions", "dataclasses", "abc", "enum"}
    | {"warnings", "copy", "random", "statistics", "fractions", "decimal", "__future__"}
    | {"contextlib", "re", "string", "textwrap", "time", "heapq", "bisect", "scipy"}
    # types: what in it builds functions from code (FunctionType, LambdaType, CodeType,
    # MethodType) is watched by name wherever it stands; SimpleNamespace is plain data
    | {"types"}
)
# Dunder names plain code uses; any other (``__globals__``, ``__builtins__``, ``__code__``,
# ``__dict__``, ``__subclasses__``...) reaches the interpreter's internals. Defining a dunder
# method (after ``def``) is plain.
_PLAIN_DUNDERS = frozenset(
    {"__init__", "__name__", "__main__", "__future__", "__all__", "__file__", "__class__"}
    | {"__call__", "__len__", "__getitem__", "__setitem__", "__iter__", "__next__", "__repr__"}
    | {"__str__", "__eq__", "__hash__", "__contains__", "__enter__", "__exit__", "__slots__"}
    | {"__post_init__", "__version__", "__qualname__", "__module__", "__array__"}
)
_WATCHED = dict.fromkeys(_ROUTES | _DECODERS, "route") | dict.fromkeys(_BUILTINS_RUNNING, "builtin")
WATCHED_NAMES = frozenset(_WATCHED)
_DUNDER = re.compile(r"__\w+__")
_BLOB = re.compile(r"[A-Za-z0-9+/=_\-]{200,}")  # a long run without spaces: base64 or hex data
# A string that names what the lists above hold: a key for getattr, vars() or sys.modules.
_WATCHED_STRING = re.compile(
    r"\A\s*(?:"
    + "|".join(re.escape(n) for n in sorted(_BUILTINS_RUNNING | _ROUTES | {"exec"}))
    + r")\s*\Z"
)


def watched_name(name: str) -> bool:
    """Whether ``runtime_reasons`` may name this identifier (wherever it stands): a builtin that
    runs text or reaches namespaces, a module or function that loads or decodes code,
    ``getattr``, or a dunder beyond plain code's."""
    name = _name(name)
    if name in _WATCHED or name == "getattr":
        return True
    return name[:2] == "__" == name[-2:] and len(name) > 4 and name not in _PLAIN_DUNDERS


def _name(text: str) -> str:
    """An identifier as Python binds it: non-ASCII names are NFKC-normalised (``ｅｘｅｃ`` is
    ``exec``)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


# -- reducing code to tokens (copydetect's filter_code, without pygments) -----------------------

_TOKEN = re.compile(
    r"""
    (?P<drop>[ \t\f\r\n;]+|\\\r?\n|\#[^\r\n]*)
   |(?P<string>[rRbBuUfF]{0,2}(?:
        '''(?:[^'\\]|\\.|'(?!''))*'''
       |\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
       |'(?:[^'\\\r\n]|\\.)*'
       |"(?:[^"\\\r\n]|\\.)*"))
   |(?P<name>[^\W\d]\w*)
   |(?P<number>0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)
   |(?P<op>\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%@&|^~<>=!]=?|.)
    """,
    re.VERBOSE | re.DOTALL,
)
# Kept as written, as pygments' lexer keeps them: keywords, builtins (int, ValueError, range).
_LITERAL_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))
_PSEUDO_NAMES = frozenset({"self", "cls", "__file__", "__name__", "__doc__", "__spec__"})
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_KEYWORDS = frozenset(keyword.kwlist)
# Parentheses around a whole value or condition after these are optional: ``return (a, b)``.
_PASS_DEF = frozenset({"pass", "def"})
_NOT_CHAINS = frozenset({".", "def", "class", "as"})  # a name after these starts no dotted name
_PAREN_AFTER = frozenset({"return", "=", "yield", "in", "if", "elif", "while", "assert"})


@dataclass
class _Reduced:
    text: str
    offsets: np.ndarray
    blocks: list[int]  # where each top-level statement starts in text
    reasons: list[str]  # what in the code may build other code at run time (runtime_reasons)


def _next_token(tokens: list, i: int) -> int:
    """The index of the first token after ``i`` that is not layout or a comment (or len)."""
    i += 1
    while i < len(tokens) and tokens[i][0]:
        i += 1
    return i


def _getattr_is_plain(tokens: list, i: int) -> bool:
    """Whether the ``getattr`` at ``i`` is called with a plain string literal as the name,
    ``getattr(obj, "name"[, default])``, or with a name bound only by loops over such literals
    (``for name in ("in_proj_bias", "bias_k"): getattr(mha, name)``: ``_literal_loop_name``)."""
    j = _next_token(tokens, i)
    if j >= len(tokens) or tokens[j][4] != "(":
        return False
    depth = 0
    while j < len(tokens):
        op = tokens[j][4]
        if op in _OPEN:
            depth += 1
        elif op in _CLOSE:
            depth -= 1
            if depth == 0:
                return False  # one argument, or none
        elif op == "," and depth == 1:
            break
        j = _next_token(tokens, j)
    j = _next_token(tokens, j)
    if j < len(tokens) and tokens[j][2] and _literal_loop_name(tokens, tokens[j][2]):
        after = _next_token(tokens, j)
        return after < len(tokens) and tokens[after][4] in (",", ")")
    if j >= len(tokens) or not tokens[j][1] or "f" in tokens[j][1][:2].lower():
        return False
    after = _next_token(tokens, j)
    return after < len(tokens) and tokens[after][4] in (",", ")")


def _literal_loop_name(tokens: list, name: str) -> bool:
    """Whether every place ``name`` stands in the file is either the target of a loop over a
    tuple or list of plain string literals (``for name in ("a", "b"):``) or the name argument of
    a ``getattr``/``hasattr`` call: then it only ever holds those strings (each one read by
    ``_string_reasons`` like any string)."""
    loops = 0
    for k, token in enumerate(tokens):
        if token[2] != name:
            continue
        before = _previous_token(tokens, k)
        if before >= 0 and tokens[before][2] == "for" and _over_literals(tokens, k):
            loops += 1
            continue
        after = _next_token(tokens, k)
        if after >= len(tokens) or tokens[after][4] not in (",", ")"):
            return False
        comma = _previous_token(tokens, k)
        if comma < 0 or tokens[comma][4] != ",":
            return False
        if not _call_of(tokens, comma, ("getattr", "hasattr")):
            return False
    return loops > 0


def _over_literals(tokens: list, k: int) -> bool:
    """Whether the loop target at ``k`` is followed by ``in (`` or ``in [``, plain string
    literals separated by commas, the closing bracket and ``:``."""
    j = _next_token(tokens, k)
    if j >= len(tokens) or tokens[j][2] != "in":
        return False
    j = _next_token(tokens, j)
    if j >= len(tokens) or tokens[j][4] not in ("(", "["):
        return False
    close = ")" if tokens[j][4] == "(" else "]"
    j = _next_token(tokens, j)
    while j < len(tokens):
        string, op = tokens[j][1], tokens[j][4]
        if string and "f" not in string[:2].lower():
            j = _next_token(tokens, j)
            if j < len(tokens) and tokens[j][4] == ",":
                j = _next_token(tokens, j)
            continue
        if op == close:
            j = _next_token(tokens, j)
            return j < len(tokens) and tokens[j][4] == ":"
        return False
    return False


def _previous_token(tokens: list, i: int) -> int:
    """The index of the last token before ``i`` that is not layout or a comment (or -1)."""
    i -= 1
    while i >= 0 and tokens[i][0]:
        i -= 1
    return i


def _call_of(tokens: list, comma: int, names: tuple[str, ...]) -> bool:
    """Whether the comma at ``comma`` separates the first two arguments of a call of one of
    ``names`` (``getattr(obj, <here>``): its first argument a dotted name."""
    j = _previous_token(tokens, comma)
    while j >= 0 and tokens[j][2]:
        k = _previous_token(tokens, j)
        if k >= 0 and tokens[k][4] == ".":
            j = _previous_token(tokens, k)
            continue
        break
    else:
        return False
    k = _previous_token(tokens, j)
    if k < 0 or tokens[k][4] != "(":
        return False
    k = _previous_token(tokens, k)
    return k >= 0 and tokens[k][2] in names


def _ends_statement(tokens: list, i: int) -> bool:
    """Whether the statement ends after token ``i``: nothing but comments and layout before a
    newline, a ``;`` or the end of the file (a ``\\`` continues the line)."""
    for j in range(i + 1, len(tokens)):
        drop = tokens[j][0]
        if not drop:
            return False
        if drop[0] not in "#\\" and ("\n" in drop or ";" in drop):
            return True
    return True


def _bare_strings_end(tokens: list, i: int) -> int:
    """Where the statement starting at the string ``i`` ends when it is nothing but strings (a
    docstring, or a string left as a statement: no effect), or 0. f-strings are code: kept."""
    while True:
        string = tokens[i][1]
        if not string or "f" in string[:2].lower():
            return 0
        if _ends_statement(tokens, i):
            return i + 1
        i = _next_token(tokens, i)
        if i >= len(tokens):
            return 0


def _span_end(tokens: list, a: int, stops: tuple[str, ...], at_line_end: bool = False) -> int:
    """The index of the first token after ``a`` at bracket depth 0 that is one of ``stops`` (or
    closes a bracket opened before ``a``; or, with ``at_line_end``, ends the statement)."""
    depth = 0
    for j in range(a + 1, len(tokens)):
        drop, op = tokens[j][0], tokens[j][4]
        if drop:
            if at_line_end and depth == 0 and drop[0] not in "#\\":
                if "\n" in drop or ";" in drop:
                    return j
            continue
        if depth == 0 and op in stops:
            return j
        if op in _OPEN:
            depth += 1
        elif op in _CLOSE:
            if depth == 0:
                return j
            depth -= 1
    return len(tokens)


# A type hint that is only a type: names, attributes, subscripts, "|" and strings holding the
# same (a forward reference). Anything else (a call, a lambda, an operator, a string that is
# not a type) may run code: it is compared as code, and a string in it is named.
_TYPE_STRING = re.compile(r"""[rRbBuU]?(['"])[\w.\[\], |]*\1\Z""")
_TYPE_OPS = frozenset({".", "[", "]", ",", "|"})
_TYPE_KEYWORDS = frozenset({"None", "True", "False"})


def _annotation_kind(tokens: list, a: int, b: int) -> str:
    """``"type"`` when tokens ``a+1 .. b-1`` are only a type, ``"string"`` when they are not and
    hold a string (``typing.get_type_hints`` and others run such strings as code), else
    ``"code"``."""
    plain, strings = True, False
    for drop, string, name, _number, op in tokens[a + 1 : b]:
        if drop:
            continue
        if string:
            strings = True
            plain = plain and bool(_TYPE_STRING.match(string))
        elif name:
            plain = plain and (name not in _KEYWORDS or name in _TYPE_KEYWORDS)
        elif op:
            plain = plain and op in _TYPE_OPS
    return "type" if plain else "string" if strings else "code"


def _def_annotations(tokens: list, i: int) -> list[tuple[int, int]]:
    """The type hints of the ``def`` at ``i``: ``(start, end)`` of each, from its ``:`` or
    ``->`` to the token after it."""
    j = _next_token(tokens, _next_token(tokens, i))
    if j >= len(tokens) or tokens[j][4] != "(":
        return []
    spans = []
    depth, default = 0, False
    while j < len(tokens):
        op = tokens[j][4]
        if op in _OPEN:
            depth += 1
        elif op in _CLOSE:
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and op == ",":
            default = False
        elif depth == 1 and op == "=":
            default = True  # (a lambda's ":" in a default is no type hint)
        elif depth == 1 and op == ":" and not default:
            end = _span_end(tokens, j, (",", "="))
            spans.append((j, end))
            j = end
            continue
        j = _next_token(tokens, j)
    k = _next_token(tokens, j)
    if k < len(tokens) and tokens[k][4] == "->":
        spans.append((k, _span_end(tokens, k, (":",))))
    return spans


def _variable_annotation(tokens: list, i: int) -> tuple[int, int] | None:
    """The type hint of the statement starting at the name ``i`` when it is ``name(.name)*: ...``
    (to its ``=`` or the statement's end), else None."""
    j = _next_token(tokens, _chain_end(tokens, i))
    if j >= len(tokens) or tokens[j][4] != ":":
        return None
    return j, _span_end(tokens, j, ("=",), at_line_end=True)


def _import_bindings(tokens: list, i: int) -> set[str]:
    """The names the import statement at ``i`` (``import``/``from``) binds."""
    end = _span_end(tokens, i, (), at_line_end=True)
    words = [t[2] or t[4] for t in tokens[i:end] if not t[0] and (t[2] or t[4] in ",*")]
    if words and words[0] == "from":
        words = words[words.index("import") + 1 :] if "import" in words else []
    else:
        words = words[1:]
    bound = set()
    for part in " ".join(words).split(","):
        names = part.split()
        if names and names[0] != "*":
            bound.add(_name(names[-1] if "as" in names else names[0]))
    return bound


def _chain_end(tokens: list, i: int) -> int:
    """The index of the last name of the dotted name starting at the name ``i`` (``i`` itself
    when no ``.name`` follows)."""
    last = i
    while True:
        j = _next_token(tokens, last)
        k = _next_token(tokens, j)
        if k >= len(tokens) or tokens[j][4] != "." or not tokens[k][2]:
            return last
        last = k


def _matching(tokens: list, i: int) -> int:
    """The index of the bracket closing the one at ``i`` (or len)."""
    depth = 0
    for j in range(i, len(tokens)):
        op = tokens[j][4]
        if op in _OPEN:
            depth += 1
        elif op in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def _string_reasons(text: str, reasons: list[str]) -> None:
    body = text.lstrip("rRbBuUfF")
    quote = 3 if body[:3] in ('"""', "'''") else 1
    inner = body[quote:-quote]
    for dunder in _DUNDER.findall(inner):
        if dunder not in _PLAIN_DUNDERS:
            reasons.append(f"the string {dunder!r}")
    if len(inner) < 40 and _WATCHED_STRING.match(inner):
        reasons.append(f"the string {inner.strip()!r}")
    blob = _BLOB.search(inner)
    if blob:
        reasons.append(f"a {len(blob.group(0)):,}-character blob")


def _reduce(code: str) -> _Reduced:
    """copydetect's filtered text and offsets for Python code, where each top-level statement
    starts, and what in the code may build other code at run time.

    Variables and attributes become ``V``, a name after ``def`` ``F``, after ``class`` ``O``, a
    string ``S``; keywords, builtins, numbers and operators stay; whitespace, comments, ``;``
    and trailing commas go. So does what a student can add or leave out without changing what
    the code does: docstrings (and any statement that is only strings), type hints that are
    only types, ``pass``, parentheses around a whole value or condition (``return (a, b)``),
    and the module in a dotted name (``np.exp`` is ``exp``, as after ``from numpy import *``:
    a name an import binds, followed by attributes, is reduced to its last attribute). The
    offsets are copydetect's: ``[index in the reduced text, characters removed before it]``,
    which ``compare_files`` uses to map matches back onto the raw code.
    """
    out: list[str] = []
    emit = out.append
    length = 0  # len("".join(out)), kept as we go
    at: list[int] = [0]  # copydetect's offsets, as two columns
    shift: list[int] = [0]
    removed = 0
    previous = ""
    importing = ""  # "module" while naming modules in an import (kept), "names" after from-import
    depth = 0  # open brackets
    line_start = True  # the next token starts a line at column 0 (a top-level statement)
    statement = True  # the next token starts a statement
    blocks: list[int] = []
    reasons: list[str] = []
    modules: set[str] = set()  # names imports bind
    hints: dict[int, int] = {}  # type hints left out: start -> end
    skip_to = 0  # tokens before this are left out
    closing: set[int] = set()  # ... and these (the closing parenthesis of one left out)
    # findall gives each token as (drop, string, name, number, op): all in C, one tuple a token.
    tokens = _TOKEN.findall(code)
    for i, (drop, string, name, number, op) in enumerate(tokens):
        if drop:
            at.append(length - 1)
            shift.append(removed)
            removed += len(drop)
            if "\n" in drop or ";" in drop:
                importing = ""
                if depth == 0 and drop[0] not in "#\\":
                    statement = True
            if drop[0] != "#":
                line_start = drop.endswith("\n") and not drop.startswith("\\")
            continue
        starts = statement
        statement = False
        text = string or name or number or op
        bound = name if name.isascii() else _name(name)
        level = depth  # the depth before this token
        # What may build code at run time: looked for in every token, kept or left out.
        if string:
            _string_reasons(text, reasons)
        elif name:
            watched = _WATCHED.get(bound)
            if watched is not None:
                if watched != "builtin" or previous != ".":
                    reasons.append(bound)
            elif bound == "getattr" and not _getattr_is_plain(tokens, i):
                reasons.append("getattr with a computed name")
            elif bound[0] == "_" and bound[:2] == "__" == bound[-2:] and len(bound) > 4:
                if bound not in _PLAIN_DUNDERS and previous != "def":
                    reasons.append(bound)
            if importing == "module" and previous in ("import", "from", ","):
                if bound not in _PLAIN_MODULES and bound not in ("import", "from"):
                    reasons.append(f"imports {bound}")
        elif op in _OPEN:
            depth += 1
        elif op in _CLOSE:
            depth = max(0, depth - 1)
        # What a student can add or leave out without changing what the code does.
        skipped = i < skip_to or (op == ")" and i in closing)
        if skipped:
            pass
        elif op:
            if hints and i in hints:
                skip_to = hints[i]
                skipped = True
            elif op == "(" and depth == 1 and previous in _PAREN_AFTER:
                close = _matching(tokens, i)
                after = _next_token(tokens, close)
                if close > _next_token(tokens, i) and (
                    _ends_statement(tokens, close)
                    or (after < len(tokens) and tokens[after][4] == ":")
                ):
                    closing.add(close)
                    skipped = True
        elif string:
            if starts:
                skip_to = _bare_strings_end(tokens, i)
                skipped = skip_to > i
        elif name:
            if starts or bound in _PASS_DEF:
                spans: list = []
                if bound == "pass":
                    skipped = True
                elif bound == "def":
                    spans = _def_annotations(tokens, i)
                elif bound in ("import", "from"):
                    modules |= _import_bindings(tokens, i)
                elif bound not in _KEYWORDS:
                    spans = [_variable_annotation(tokens, i)]
                for span in spans:
                    if span is None:
                        continue
                    kind = _annotation_kind(tokens, *span)
                    if kind == "type":
                        hints[span[0]] = span[1]
                    elif kind == "string":
                        reasons.append("a string in a type hint (code, when evaluated)")
            if bound in modules and not importing and previous not in _NOT_CHAINS:
                skip_to = _chain_end(tokens, i)
                skipped = skip_to > i
        if skipped:
            at.append(length - 1)
            shift.append(removed)
            removed += len(text)
            continue
        if line_start and level == 0:
            blocks.append(length)
        line_start = False
        letter = None
        if op:
            if op == ",":
                j = _next_token(tokens, i)
                if j < len(tokens) and tokens[j][4] in _CLOSE:  # a trailing comma: optional
                    at.append(length - 1)
                    shift.append(removed)
                    removed += 1
                    continue
        elif string:
            if text[0] in "'\"" and not text.startswith(("'''", '"""')):
                # A plain one-line string: pygments keeps its quotes, reduces what is inside.
                if len(text) == 2:
                    emit('""')
                    length += 2
                else:
                    out += ['"', "S", '"']
                    length += 3
                    at.append(length - 2)
                    shift.append(removed)
                    removed += len(text) - 3
                previous = text
                continue
            letter = "S"
        elif name:
            if previous != "@" and name not in _PSEUDO_NAMES:
                # (decorators, self, __name__ stay as written, as pygments keeps them)
                if name in ("from", "import"):
                    # an import starts a statement ("raise E from e", "yield from g" are not)
                    if starts or importing:
                        importing = (
                            "names" if name == "import" and importing == "module" else "module"
                        )
                elif previous == ".":
                    letter = None if importing == "module" else "V"
                elif bound not in _LITERAL_NAMES and importing != "module":
                    letter = "F" if previous == "def" else "O" if previous == "class" else "V"
            if letter is None and bound is not name:
                text = bound  # a keyword or builtin written in other letters is the same name
        previous = text
        if letter is None:
            emit(text)
            length += len(text)
            if len(text) != len(name or text):
                at.append(length - 1)
                shift.append(removed)
                removed += len(name) - len(text)
        else:
            emit(letter)
            length += 1
            at.append(length - 1)
            shift.append(removed)
            removed += len(text) - 1
    return _Reduced(
        "".join(out), np.array([at, shift], dtype=np.int64).T, blocks, list(dict.fromkeys(reasons))
    )


def reduce_code(code: str) -> tuple[str, np.ndarray]:
    """copydetect's filtered text and offsets for Python code (see ``_reduce``)."""
    reduced = _reduce(code)
    return reduced.text, reduced.offsets


def runtime_reasons(code: str) -> list[str]:
    """What in ``code`` (as Python reads it) may build or reach other code at run time, in a
    few words each, or an empty list: names that run text (``exec``, ``eval``, ``compile``,
    ``__import__``), reach the interpreter's namespaces or frames (``vars``, ``globals``,
    ``sys``, ``__globals__``, ``getattr`` with a computed name), load code (``pickle``,
    ``importlib``, ``torch.jit``...) or decode blobs (``base64``, ``zlib``, ``codecs``...),
    evaluate type hints as code (``typing.get_type_hints``, ``ForwardRef``,
    ``singledispatch``...), a type hint holding a string that is not a type, strings naming
    them, long blobs, imports beyond plain numerical code, and a coding
    declaration that makes Python read other text than the file shows. A list of known routes:
    a route it does not know is not named."""
    source = read_code(code)
    reasons = _reduce(source).reasons
    if source != code.replace("\r\n", "\n").replace("\r", "\n"):
        reasons.insert(0, "a coding declaration (Python reads other text than the file shows)")
    return reasons


# -- code held as text -------------------------------------------------------------------------

_NOT_CODE_ONLY = (ast.Expr, ast.Pass)


def _parse(text: str) -> ast.Module | None:
    """``text`` parsed as Python, or None (quietly: no SyntaxWarning reaches the grader's
    output)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _is_code(text: str) -> bool:
    """Whether ``text`` is Python with a statement beyond a lone expression (so that a word, a
    name or a blob of base64 is not taken for code)."""
    if len(text) < 12 or "\0" in text:
        return False
    tree = _parse(text)
    return tree is not None and any(
        not isinstance(node, _NOT_CODE_ONLY)
        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
        for node in tree.body
    )


def _inflate(data: bytes) -> bytes | None:
    """``data`` decompressed (zlib, gzip, raw deflate, bz2, xz/lzma), at most MAX_BUILT bytes."""
    attempts = []
    if data[:1] == b"\x78":
        attempts.append(zlib.decompressobj)
    if data[:2] == b"\x1f\x8b":
        attempts.append(lambda: zlib.decompressobj(16 + zlib.MAX_WBITS))
    attempts.append(lambda: zlib.decompressobj(-zlib.MAX_WBITS))
    if data[:3] == b"BZh":
        attempts.append(bz2.BZ2Decompressor)
    if data[:1] in (b"\xfd", b"\x5d"):
        attempts.append(lzma.LZMADecompressor)
    for make in attempts:
        try:
            out = make().decompress(data, MAX_BUILT)
        except (ValueError, OSError, EOFError, zlib.error, lzma.LZMAError):
            continue
        if out:
            return out
    return None


_DECODE = {
    "b64decode": base64.b64decode,
    "standard_b64decode": base64.standard_b64decode,
    "decodebytes": base64.decodebytes,
    "a2b_base64": binascii.a2b_base64,
    "urlsafe_b64decode": base64.urlsafe_b64decode,
    "b32decode": base64.b32decode,
    "b16decode": lambda x: base64.b16decode(x, casefold=True),
    "b85decode": base64.b85decode,
    "a85decode": base64.a85decode,
    "unhexlify": binascii.unhexlify,
    "a2b_hex": binascii.a2b_hex,
    "fromhex": lambda x: bytes.fromhex(x if isinstance(x, str) else x.decode("ascii")),
    "decompress": _inflate,
}
_CODECS = {"rot13": "rot13", "rot_13": "rot13", "base64": "b64decode", "base_64": "b64decode"}
_CODECS |= {"hex": "unhexlify", "hex_codec": "unhexlify", "zlib": "decompress", "zip": "decompress"}
_CODECS |= {"bz2": "decompress", "base64_codec": "b64decode", "zlib_codec": "decompress"}


def _transform(how: str, value: object) -> object:
    """``value`` through the decoder named ``how`` (a key of _DECODE, or rot13), or None."""
    try:
        if how == "rot13":
            return codecs.decode(value, "rot13") if isinstance(value, str) else None
        if isinstance(value, str):
            value = value.encode("latin-1") if how != "fromhex" else value
        if not isinstance(value, bytes | str):
            return None
        return _DECODE[how](value)
    except (ValueError, TypeError, binascii.Error, UnicodeError, KeyError):
        return None


class _Folder:
    """The values simple constant expressions of a module fold to: literals, concatenation and
    repetition, f-strings of constants, ``join``, ``chr``, ``bytes``, slices (``[::-1]``),
    ``replace``, ``encode``/``decode``, ``to_bytes``, the decoders of _DECODE and
    ``codecs.decode``, and names bound once to such an expression."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        stores: Counter = Counter()
        bound: dict[str, ast.expr] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stores[node.id] += 1
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                if isinstance(node.targets[0], ast.Name):
                    bound[node.targets[0].id] = node.value
        self.names = {n: v for n, v in bound.items() if stores[n] == 1}
        self.memo: dict[int, object] = {}

    def values(self) -> list[str | bytes]:
        """What the arguments of calls and the values of assignments fold to."""
        found = []
        for node in ast.walk(self.tree):
            parts: list = []
            if isinstance(node, ast.Call):
                parts = [*node.args, *(k.value for k in node.keywords)]
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.Return) and node.value:
                parts = [node.value]
            for part in parts:
                value = self.fold(part)
                if isinstance(value, str | bytes) and len(value) >= 12:
                    found.append(value)
        return list(dict.fromkeys(found))

    def fold(self, node: ast.AST, depth: int = 0) -> object:
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # a name bound to itself folds to nothing
        try:
            value = self._fold(node, depth) if depth < 64 else None
        except (ValueError, TypeError, OverflowError, UnicodeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, str | bytes | list) and len(value) > MAX_BUILT:
            value = None
        self.memo[key] = value
        return value

    def _fold(self, node: ast.AST, depth: int) -> object:
        def f(n: ast.AST) -> object:
            return self.fold(n, depth + 1)

        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, str | bytes | int) and not isinstance(v, bool) else None
        if isinstance(node, ast.Name):
            bound = self.names.get(node.id)
            return f(bound) if bound is not None else None
        if isinstance(node, ast.JoinedStr):
            parts = [f(p) for p in node.values]
            return "".join(parts) if all(isinstance(p, str) for p in parts) else None
        if isinstance(node, ast.FormattedValue):
            v = f(node.value)
            return str(v) if isinstance(v, str | int) else None
        if isinstance(node, ast.List | ast.Tuple):
            items = [f(e) for e in node.elts]
            return items if all(i is not None for i in items) else None
        if isinstance(node, ast.BinOp):
            a, b = f(node.left), f(node.right)
            if isinstance(node.op, ast.Add) and type(a) is type(b) and a is not None:
                return a + b
            if isinstance(node.op, ast.Mult) and isinstance(b, int) and 0 <= b <= MAX_BUILT:
                return a * b if isinstance(a, str | bytes) and len(a) * b <= MAX_BUILT else None
            return None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            v = f(node.value)
            bounds = [None if s is None else f(s) for s in (node.slice.lower, node.slice.upper)]
            step = None if node.slice.step is None else f(node.slice.step)
            if isinstance(v, str | bytes | list) and all(
                b is None or isinstance(b, int) for b in bounds
            ):
                return v[slice(*bounds, step if isinstance(step, int) and step else None)]
            return None
        if isinstance(node, ast.Call):
            return self._call(node, f)
        return None

    def _call(self, node: ast.Call, f) -> object:
        func = node.func
        name = _name(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
        if name == "map" and len(node.args) == 2 and getattr(node.args[0], "id", "") == "chr":
            codes = f(node.args[1])
            return [chr(c) for c in codes] if isinstance(codes, list) else None
        args = [f(a) for a in node.args]
        obj = f(func.value) if isinstance(func, ast.Attribute) else None
        first = args[0] if args else None
        if name == "join" and isinstance(obj, str | bytes) and len(args) == 1:
            items = list(first) if isinstance(first, str) else first
            if isinstance(items, list) and all(type(i) is type(obj) for i in items):
                return obj.join(items)
        if name == "chr" and isinstance(first, int):
            return chr(first)
        if name in ("bytes", "bytearray") and isinstance(first, list):
            return bytes(first) if all(isinstance(i, int) for i in first) else None
        if name in ("bytes", "bytearray", "str") and isinstance(first, str) and len(args) >= 2:
            return first.encode(args[1]) if isinstance(args[1], str) and name != "str" else None
        if name == "str" and isinstance(first, str):
            return first
        if name in ("reversed", "list") and isinstance(first, str | bytes | list):
            return first[::-1] if name == "reversed" else first
        if name == "replace" and isinstance(obj, str | bytes) and len(args) >= 2:
            if type(args[0]) is type(obj) and type(args[1]) is type(obj):
                return obj.replace(args[0], args[1])
        if name == "encode" and isinstance(obj, str):
            return obj.encode(first if isinstance(first, str) else "utf-8")
        if name == "decode" and isinstance(obj, bytes):
            return obj.decode(first if isinstance(first, str) else "utf-8")
        if name in ("decode", "encode") and obj is None and len(args) >= 2:
            how = _CODECS.get(str(args[1]).lower().replace("-", "_"))
            if how is not None:
                return _transform(how, first)
            if name == "decode" and isinstance(first, bytes) and isinstance(args[1], str):
                return first.decode(args[1])
        if name == "to_bytes" and isinstance(obj, int) and isinstance(first, int):
            order = args[1] if len(args) > 1 and isinstance(args[1], str) else "big"
            return obj.to_bytes(first, order) if first <= MAX_BUILT else None
        if name in _DECODE and first is not None:
            return _transform(name, first)
        return None


def _decodings(value: str | bytes, budget: list[int]) -> Iterator[str]:
    """``value`` and what it decodes to, in up to three layers: text as it is, reversed or
    rot13; base64 (standard, URL-safe, base32, base85), hex; compressed bytes inflated. Each
    value looked at costs its length from ``budget[0]``; nothing more is tried once it is
    spent."""
    seen: set = set()
    todo = [(value, 0)]
    while todo:
        v, depth = todo.pop()
        if v in seen or not v or budget[0] <= 0:
            continue
        seen.add(v)
        budget[0] -= len(v)
        if isinstance(v, bytes):
            try:
                text = v.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                yield text
            nexts = [_inflate(v)]
            if text is not None:
                nexts.append(text)
        else:
            yield v
            nexts = [v[::-1], _transform("rot13", v)]
            compact = "".join(v.split())
            if re.fullmatch(r"[A-Za-z0-9+/=_\-]+", compact):
                for how in ("b64decode", "urlsafe_b64decode", "b32decode", "fromhex"):
                    nexts.append(_transform(how, compact))
            else:
                nexts.append(_transform("b85decode", compact))
        if depth < 3:
            todo += [(n, depth + 1) for n in nexts if n]


def built_code(source: str) -> tuple[list[str], bool]:
    """Python code that ``source`` holds as text, which it may run: what the arguments of its
    calls and its assignments fold to (``_Folder``), decoded where they are blobs
    (``_decodings``), kept where they parse as Python with a statement beyond a lone
    expression; in layers (code that holds code), at most MAX_BUILT characters. Also whether
    the search went through every value (it stops after DECODE_WORK characters). Best effort:
    what it cannot fold or decode is still named by ``runtime_reasons``."""
    found: list[str] = []
    seen: set[str] = set()
    total = 0
    budget = [DECODE_WORK]

    def visit(text: str, layer: int) -> None:
        nonlocal total
        tree = _parse(text)
        if tree is None:
            return
        for value in _Folder(tree).values():
            for decoded in _decodings(value, budget):
                if decoded in seen or total + len(decoded) > MAX_BUILT:
                    continue
                seen.add(decoded)
                if decoded != text and _is_code(decoded):
                    found.append(decoded)
                    total += len(decoded)
                    if layer < 3:
                        visit(decoded, layer + 1)

    visit(source, 0)
    return found, budget[0] > 0


def kgram_hashes(text: str, k: int = K) -> np.ndarray:
    """A hash of every k-character window: polynomial mod 2**64, then splitmix64's mixer.
    Fixed (not salted per process), so every run of the grader picks the same fingerprints."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    base = np.uint64(1_000_003)
    for j in range(k):
        h = h * base + codes[j : j + n]
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h.view(np.int64)


_INLINED_HEADER = (
    "\n\n# ---- this file with its small functions written in place of their calls, as the "
    "grader also compares it ----\n"
)
_CONTRACT_NAMES = frozenset(
    {"softmax", "split_heads", "merge_heads", "attention", "multi_head_attention"}
    | {"distinct_head_pairs", "parameter_counts", "weights_from_torch", "cross_check"}
)
INLINE_PASSES = 4  # helpers calling helpers: inlined this many levels deep
_TOP_DEF = re.compile(r"^def[ \t]+(\w+)", re.MULTILINE)


def _small_function(node: ast.stmt) -> tuple[list[str], list[ast.stmt], ast.expr] | None:
    """A top-level function that only names values and returns one (no default, no control
    flow, no decorator), as (its parameters, its assignments, the returned expression); None
    for any other statement. A contract function is never one: it is what is graded."""
    if not isinstance(node, ast.FunctionDef) or node.name in _CONTRACT_NAMES:
        return None
    a = node.args
    if node.decorator_list or a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        return None
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    steps = body[:-1]
    if not all(
        isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets)
        for st in steps
    ):
        return None
    inner = ast.Module(body=body, type_ignores=[])
    for n in ast.walk(inner):
        if isinstance(n, ast.Lambda | ast.Yield | ast.YieldFrom | ast.Await | ast.NamedExpr):
            return None
        if isinstance(n, ast.Name) and n.id == node.name:
            return None  # recursive
    return [x.arg for x in a.args], steps, body[-1].value


class _Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node


def _plain_call(node: ast.AST, helpers: dict) -> tuple[str, list[ast.expr]] | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in helpers
        and not node.keywords
        and not any(isinstance(x, ast.Starred) for x in node.args)
        and len(node.args) == len(helpers[node.func.id][0])
    ):
        return node.func.id, node.args
    return None


class _Inline(ast.NodeTransformer):
    """Calls of small functions written in place: a function that only returns an expression,
    wherever it is called; one that names values first, where its call is a statement's whole
    value (``x = f(a)``, ``return f(a)``)."""

    def __init__(self, helpers: dict):
        self.helpers = helpers
        self.done = 0

    def _expand(self, name: str, args: list[ast.expr]) -> tuple[list[ast.stmt], ast.expr]:
        params, steps, value = self.helpers[name]
        sub = _Substitute(dict(zip(params, args, strict=True)))
        self.done += 1
        return [sub.visit(copy.deepcopy(st)) for st in steps], sub.visit(copy.deepcopy(value))

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        call = _plain_call(node, self.helpers)
        if call is None or self.helpers[call[0]][1]:
            return node
        return self._expand(*call)[1]

    def _statement(self, node: ast.Assign | ast.Return) -> object:
        call = _plain_call(node.value, self.helpers)
        if call is None or not self.helpers[call[0]][1]:
            return self.generic_visit(node)
        for arg in call[1]:
            self.visit(arg)
        steps, value = self._expand(*call)
        node.value = value
        return [*steps, node]

    visit_Assign = visit_Return = _statement


def inlined_code(source: str) -> str | None:
    """``source`` with the calls of its small functions (``_small_function``) written in place
    and the functions left out, as ``ast.unparse`` writes it; None when it has none called, or
    does not parse. Code split into many small functions, one statement each, shares no k-gram
    with the code it was split from: compared this way too, it does."""
    if all(name in _CONTRACT_NAMES for name in _TOP_DEF.findall(source)):
        return None  # no function of its own at the top level: nothing to parse
    tree = _parse(source)
    if tree is None:
        return None
    changed = False
    for _ in range(INLINE_PASSES):
        helpers = {n.name: f for n in tree.body if (f := _small_function(n)) is not None}
        if not helpers:
            break
        inline = _Inline(helpers)
        tree.body = [
            inline.visit(n) if not (isinstance(n, ast.FunctionDef) and n.name in helpers) else n
            for n in tree.body
        ]
        if not inline.done:
            break
        changed = True
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        tree.body = [
            n
            for n in tree.body
            if not (isinstance(n, ast.FunctionDef) and n.name in helpers and n.name not in used)
        ]
    if not changed:
        return None
    try:
        return ast.unparse(ast.fix_missing_locations(tree))
    except (ValueError, RecursionError):
        return None


@dataclass
class Fingerprint:
    """One file's fingerprints, with the attributes of copydetect's CodeFingerprint that its
    ``compare_files`` reads (``hashes``, ``hash_idx``, ``token_coverage``...)."""

    filename: str
    raw_code: str  # what is shown: the code as Python reads it, with the code it builds after it
    filtered_code: str
    offsets: np.ndarray
    kgrams: np.ndarray  # hash of the k-gram at each kept position
    positions: np.ndarray  # where each kept k-gram starts in filtered_code
    k: int = K
    source: str = ""  # the file as handed in (fingerprints made while grading are reused for it)
    canon: str = ""  # the reduced code's top-level statements in sorted order, hashed
    reasons: list[str] = field(default_factory=list)  # why a person should read it anyway

    def keep(self, mask: np.ndarray) -> None:
        self.kgrams, self.positions = self.kgrams[mask], self.positions[mask]
        for cached in ("_idx", "_unique", "_coverage"):
            self.__dict__.pop(cached, None)

    def drop(self, hashes: np.ndarray) -> None:
        """Forget the k-grams whose hash is in `hashes` (sorted, unique)."""
        if len(hashes) and len(self.kgrams):
            self.keep(~_member(self.kgrams, hashes))

    @property
    def unique(self) -> np.ndarray:
        """The kept hashes, sorted, each once."""
        if "_unique" not in self.__dict__:
            self.__dict__["_unique"] = np.unique(self.kgrams)
        return self.__dict__["_unique"]

    @property
    def hash_idx(self) -> dict[int, list[int]]:
        if "_idx" not in self.__dict__:
            idx: dict[int, list[int]] = {}
            for h, i in zip(self.kgrams.tolist(), self.positions.tolist(), strict=True):
                idx.setdefault(h, []).append(i)
            self.__dict__["_idx"] = idx
        return self.__dict__["_idx"]

    @property
    def hashes(self) -> set[int]:
        return set(self.hash_idx)

    @property
    def token_coverage(self) -> int:
        """Characters of filtered_code inside some kept k-gram (copydetect's get_token_coverage,
        vectorised)."""
        if "_coverage" not in self.__dict__:
            self.__dict__["_coverage"] = _covered(self.positions, self.k, len(self.filtered_code))
        return self.__dict__["_coverage"]

    def matched(self, other: Fingerprint) -> int:
        """Characters of filtered_code inside some kept k-gram that ``other`` holds too (what
        copydetect's compare_files counts as this file's overlap)."""
        if not len(other.kgrams):
            return 0
        mask = _member(self.kgrams, other.unique)
        return _covered(self.positions[mask], self.k, len(self.filtered_code))


def _covered(starts: np.ndarray, k: int, length: int) -> int:
    """Characters inside the union of the windows [start, start + k) (starts rising)."""
    if not len(starts):
        return 0
    ends = np.minimum(starts + k, length)
    # The ends rise with the starts (k is fixed), so each window adds what lies beyond the
    # previous one's end.
    previous = np.concatenate([starts[:1], ends[:-1]])
    return int(np.sum(ends - np.minimum(np.maximum(starts, previous), ends)))


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """values in sorted_set, elementwise (a binary search: much faster than np.isin here)."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    i = np.searchsorted(sorted_set, values).clip(max=len(sorted_set) - 1)
    return sorted_set[i] == values


_BUILT_HEADER = "\n\n# ---- code this file builds at run time, as the grader decoded it ({}) ----\n"


def fingerprint(code: str, filename: str, boilerplate: np.ndarray | None = None) -> Fingerprint:
    """Every k-gram of the reduced code Python runs, except the boilerplate's (copydetect with
    window 1), and what a person should know about the file (``runtime_reasons``)."""
    source = read_code(code)
    reduced = _reduce(source)
    reasons = list(reduced.reasons)
    if source != code.replace("\r\n", "\n").replace("\r", "\n"):
        reasons.insert(0, "a coding declaration (Python reads other text than the file shows)")
    shown = source
    inlined = inlined_code(source) if len(source) <= MAX_REDUCED else None
    if inlined is not None:
        shown += _INLINED_HEADER + inlined
        reduced = _reduce(shown)
    if reasons:
        pieces, complete = built_code(source)
        if not complete:
            reasons.append("more text than the grader decodes: some of it not looked at")
        if pieces:
            shown += "".join(_BUILT_HEADER.format(i + 1) + p for i, p in enumerate(pieces))
            reduced = _reduce(shown)
            reasons += [r for r in reduced.reasons if r not in reasons]
            reasons.append(f"decoded: {len(pieces)} piece(s) of code, compared with the rest")
    text, offsets = reduced.text, reduced.offsets
    if len(text) > MAX_REDUCED:
        reasons.append(
            f"{len(text):,} characters of code once comments and layout are set aside: "
            f"compared on the first {MAX_REDUCED:,}"
        )
        text, offsets = text[:MAX_REDUCED], offsets[offsets[:, 0] < MAX_REDUCED]
    hashes = kgram_hashes(text)
    blocks = [b for b in reduced.blocks if b < len(text)]
    ends = [*blocks[1:], len(text)]
    parts = sorted(text[b:e] for b, e in zip(blocks, ends, strict=True))
    head = text[: blocks[0]] if blocks else text
    canon = hashlib.blake2b("\0".join([head, *parts]).encode(), digest_size=12).hexdigest()
    fp = Fingerprint(
        filename, shown, text, offsets, hashes, np.arange(len(hashes)), K, code, canon, reasons
    )
    if boilerplate is not None:
        fp.drop(boilerplate)
    return fp


def fingerprint_files(files: Mapping[str, str], student: str = "") -> dict[str, Fingerprint]:
    """Fingerprints of a submission's code files (the stubs' k-grams left out)."""
    boiler = stub_boilerplate()
    return {
        name: fingerprint(files[name], f"{student}/{name}", boiler[name])
        for name in CODE_FILES
        if files.get(name)
    }


@functools.cache
def stub_boilerplate() -> dict[str, np.ndarray]:
    """All k-gram hashes of the handed-out stubs, per file: code that every student starts from."""
    out = {}
    for name in CODE_FILES:
        try:
            reduced, _ = reduce_code(read_code((EXERCISES / name).read_text()))
        except OSError:
            reduced = ""
        out[name] = np.unique(kgram_hashes(reduced))
    return out


# -- comparing a class -----------------------------------------------------------------------


@dataclass
class Pair:
    a: str
    b: str
    share_a: float  # share of a's own code (stubs and common code excluded) also found in b
    share_b: float
    matched: int  # reduced characters in matched stretches (the smaller of the two sides)
    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> highlighted html
    contained: bool = False  # listed because one of the two is (nearly) all in the other

    @property
    def score(self) -> float:
        return min(self.share_a, self.share_b)


@dataclass
class Group:
    """Submissions listed together: ``same`` (their reduced code is the same, whatever the
    class size) or ``shared`` (their code is mostly code that more than ``common_limit``
    submissions hold, and each has at least ``share`` of its code in another member's)."""

    kind: str
    students: list[str]
    share: float = 1.0
    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # two members side by side
    shown: tuple[str, str] = ("", "")  # which two


@dataclass
class Report:
    students: int
    pairs: list[Pair]  # listed pairs, most similar first
    threshold: float = THRESHOLD
    common_limit: int = 0
    compared: int = 0  # pairs that copydetect compared after screening
    groups: list[Group] = field(default_factory=list)  # the same code, then shared code
    flagged: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # code built at run
    # time: student -> file -> reasons


def common_limit_for(students: int) -> int:
    """Code in more than this many submissions is common (never less than 10)."""
    return max(10, students // 20)


def compare(
    sources: Mapping[str, Mapping[str, str]],
    threshold: float = THRESHOLD,
    min_match: int = MIN_MATCH,
    common_limit: int | None = None,
    highlight: bool = True,
    given: Mapping[str, Mapping[str, Fingerprint]] | None = None,
) -> Report:
    """Pairs, groups and files worth a look (see the module's docstring). `given` may hold
    fingerprints already made (by the grading processes) of some students' files."""
    from copydetect.detector import compare_files

    students = sorted(sources)
    limit = common_limit_for(len(students)) if common_limit is None else common_limit
    given = given or {}
    full: dict[str, dict[str, Fingerprint]] = {}  # every k-gram but the stubs'
    for s in students:
        # Fingerprints made while grading are used when they are of this very code.
        ready, todo = given.get(s) or {}, {}
        full[s] = {}
        for name, code in sources[s].items():
            fp = ready.get(name)
            if isinstance(fp, Fingerprint) and fp.source == code and fp.k == K:
                full[s][name] = copy.copy(fp)  # (compare drops common code from copies)
            else:
                todo[name] = code
        full[s].update(fingerprint_files(todo, s))
        for fp in full[s].values():
            fp.unique  # noqa: B018 (made once, before the copies below share it)
    flagged = {
        s: {name: list(fp.reasons) for name, fp in sorted(full[s].items()) if fp.reasons}
        for s in students
    }
    flagged = {s: files for s, files in flagged.items() if files}
    own = {s: sum(fp.token_coverage for fp in full[s].values()) for s in students}
    same = _same_code(students, full, own, min_match)

    # For pairs, code that more than `limit` submissions hold is common: left out.
    prints = {s: {name: copy.copy(fp) for name, fp in full[s].items()} for s in students}
    common: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # the common hashes, how many hold each
    for name in CODE_FILES:
        docs = [prints[s][name] for s in students if name in prints[s]]
        if not docs:
            continue
        values, counts = np.unique(np.concatenate([d.unique for d in docs]), return_counts=True)
        many = counts > limit
        common[name] = (values[many], counts[many])
        for d in docs:
            d.drop(values[many])
    shared = _shared_code(students, full, own, common, threshold, min_match, highlight)

    candidates = _screen(students, prints, threshold)
    flagged_pairs: list[Pair] = []
    for a, b in candidates:
        matched = {a: 0.0, b: 0.0}
        covered = {a: 0.0, b: 0.0}
        slices = {}
        for name in CODE_FILES:
            fa, fb = prints[a].get(name), prints[b].get(name)
            for s, f in ((a, fa), (b, fb)):
                if f is not None:
                    covered[s] += f.token_coverage
            if fa is None or fb is None or not (fa.hashes & fb.hashes):
                continue
            _, (sim_a, sim_b), (sl_a, sl_b) = compare_files(fa, fb)
            matched[a] += sim_a * fa.token_coverage
            matched[b] += sim_b * fb.token_coverage
            slices[name] = (sl_a, sl_b)
        share_a = matched[a] / covered[a] if covered[a] else 0.0
        share_b = matched[b] / covered[b] if covered[b] else 0.0
        pair = Pair(a, b, share_a, share_b, int(min(matched.values())))
        both = pair.score >= threshold and pair.matched >= min_match
        inside = any(
            share >= max(CONTAIN, threshold) and matched[s] >= max(CONTAIN_MIN, min_match)
            for s, share in ((a, share_a), (b, share_b))
        )
        if both or inside:
            pair.contained = not both
            if highlight:
                pair.files = _highlight(prints[a], prints[b], slices)
            flagged_pairs.append(pair)
    flagged_pairs.sort(key=lambda p: (-p.score, -max(p.share_a, p.share_b), p.a, p.b))
    groups = same + shared
    return Report(len(students), flagged_pairs, threshold, limit, len(candidates), groups, flagged)


def _same_code(
    students: list[str], prints: dict[str, dict[str, Fingerprint]], own: dict, min_match: int
) -> list[Group]:
    """Students whose reduced code is the same in every file (names, comments, layout and the
    order of top-level statements set aside), with at least ``min_match`` reduced characters
    of their own beyond the stubs: listed whatever the class size."""
    by_code: dict[tuple, list[str]] = {}
    for s in students:
        if own[s] >= min_match:
            key = tuple(prints[s][n].canon if n in prints[s] else "" for n in CODE_FILES)
            by_code.setdefault(key, []).append(s)
    groups = [Group("same", members) for members in by_code.values() if len(members) > 1]
    return sorted(groups, key=lambda g: (-len(g.students), g.students))


def _shared_code(
    students: list[str],
    prints: dict[str, dict[str, Fingerprint]],
    own: dict[str, int],
    common: dict[str, tuple[np.ndarray, np.ndarray]],
    threshold: float,
    min_match: int,
    highlight: bool,
) -> list[Group]:
    """Groups of at least GROUP_MIN students whose code is mostly common code (held by more
    than common_limit submissions), who each have at least ``threshold`` of their code (all of
    it but the stubs) in common with another member, and who are most (COHESION) of the
    submissions holding most (COHESION) of the code they share, hash by hash: one body of code
    in many copies, not idioms that many submissions hold in other company (an idiom held by
    fifty counts as one hash, not fifty holders).

    Only students whose sampled fingerprints are mostly common are candidates; students with
    the same code count once (with their number); candidates are screened by the common
    samples they share (one matrix product), then linked strongest first where the shares
    (copydetect's coverage, common code counted) reach the threshold, skipping pairs already
    linked, so that a group of a hundred copies costs about a hundred comparisons."""
    salt = {name: np.int64(i * 0x5851F42D4C957F2D) for i, name in enumerate(CODE_FILES)}
    reps: list[str] = []  # one student per distinct code
    members_of: dict[str, list[str]] = {}
    rep_of: dict[tuple, str] = {}
    mostly: dict[str, np.ndarray] = {}  # a representative's sampled common hashes
    holders: dict[str, np.ndarray] = {}  # ... how many submissions hold each
    size: dict[str, int] = {}  # ... and how many sampled hashes it has in all
    for s in students:
        if not prints[s] or own[s] < min_match:
            continue
        everything, held, held_by = [], [], []
        for name, fp in prints[s].items():
            sample = fp.unique[fp.unique % SAMPLE == 0]
            everything.append(sample ^ salt[name])
            if name in common:
                values, counts = common[name]
                mine = sample[_member(sample, values)]
                held.append(mine ^ salt[name])
                held_by.append(counts[np.searchsorted(values, mine)])
        n_all = sum(len(x) for x in everything)
        n_common = sum(len(x) for x in held)
        if not n_all or n_common < SCREEN * threshold * n_all:
            continue
        rep = rep_of.setdefault(tuple(fp.canon for _, fp in sorted(prints[s].items())), s)
        if rep == s:
            reps.append(s)
            members_of[s] = []
            mostly[s], holders[s] = np.concatenate(held), np.concatenate(held_by)
            size[s] = n_all
        members_of[rep].append(s)
    if len(reps) < 2:
        return []
    columns, index = np.unique(np.concatenate([mostly[r] for r in reps]), return_inverse=True)
    matrix = np.zeros((len(reps), len(columns)), dtype=np.float32)
    rows = np.repeat(np.arange(len(reps)), [len(mostly[r]) for r in reps])
    matrix[rows, index] = 1.0
    overlap = matrix @ matrix.T
    sizes = np.array([size[r] for r in reps], dtype=np.float32)
    estimate = np.minimum(overlap / sizes[:, None], overlap / sizes[None, :])
    i_idx, j_idx = np.nonzero(np.triu(estimate >= SCREEN * threshold, k=1))
    order = np.argsort(-estimate[i_idx, j_idx], kind="stable")
    parent = list(range(len(reps)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best = [0.0] * len(reps)  # each representative's largest share found in another member
    links: list[tuple[int, int]] = []
    for i, j in zip(i_idx[order].tolist(), j_idx[order].tolist(), strict=True):
        if root(i) == root(j):
            continue
        a, b = reps[i], reps[j]
        share_a, share_b = _full_shares(prints[a], prints[b], own[a], own[b])
        if min(share_a, share_b) < threshold:
            continue
        best[i], best[j] = max(best[i], share_a), max(best[j], share_b)
        parent[root(i)] = root(j)
        links.append((i, j))
    components: dict[int, list[int]] = {}
    for i in range(len(reps)):
        components.setdefault(root(i), []).append(i)
    groups = []
    for rows_of in components.values():
        members = sorted(s for i in rows_of for s in members_of[reps[i]])
        if len(rows_of) < 2 or len(members) < GROUP_MIN:
            continue
        # The code two or more members hold: how many of its holders are members?
        hashes = np.concatenate([mostly[reps[i]] for i in rows_of])
        held_by = np.concatenate([holders[reps[i]] for i in rows_of])
        weight = np.repeat(
            [len(members_of[reps[i]]) for i in rows_of], [len(mostly[reps[i]]) for i in rows_of]
        )
        kept, where, inside = np.unique(hashes, return_index=True, return_inverse=True)
        in_group = np.bincount(inside, weights=weight)
        shared_by = in_group >= 2
        if not shared_by.any():
            continue
        mostly_members = in_group[shared_by] >= COHESION * held_by[where][shared_by]
        if mostly_members.mean() < COHESION:
            continue
        group = Group("shared", members, min(best[i] for i in rows_of))
        rows_set = set(rows_of)
        i, j = next((i, j) for i, j in links if i in rows_set)
        group.shown = (reps[i], reps[j])
        if highlight:
            group.files = _highlight_full(prints[reps[i]], prints[reps[j]])
        groups.append(group)
    return sorted(groups, key=lambda g: (-len(g.students), g.students))


def _full_shares(
    a: dict[str, Fingerprint], b: dict[str, Fingerprint], own_a: int, own_b: int
) -> tuple[float, float]:
    """The share of each one's code (stubs excluded) that the other holds too."""
    matched_a = sum(fa.matched(b[n]) for n, fa in a.items() if n in b)
    matched_b = sum(fb.matched(a[n]) for n, fb in b.items() if n in a)
    return (matched_a / own_a if own_a else 0.0, matched_b / own_b if own_b else 0.0)


def _highlight_full(a: dict[str, Fingerprint], b: dict[str, Fingerprint]) -> dict:
    from copydetect.detector import compare_files

    slices = {}
    for name in CODE_FILES:
        if name in a and name in b and a[name].hashes & b[name].hashes:
            slices[name] = compare_files(a[name], b[name])[2]
    return _highlight(a, b, slices)


def _screen(
    students: list[str], prints: dict[str, dict[str, Fingerprint]], threshold: float
) -> list[tuple[str, str]]:
    """Pairs whose sampled fingerprints overlap enough that copydetect should compare them."""
    index: dict[tuple[str, int], list[str]] = {}
    size: Counter = Counter()
    for s in students:
        for name, fp in prints[s].items():
            sample = fp.unique[fp.unique % SAMPLE == 0].tolist()
            size[s] += len(sample)
            for h in sample:
                index.setdefault((name, h), []).append(s)
    shared: Counter = Counter()
    for holders in index.values():
        if len(holders) > 1:
            shared.update(combinations(holders, 2))
    # A share of the threshold, of the smaller of the two (so that a copy padded with code of
    # its own still passes): a sample of a hundred or more fingerprints is not that far off
    # (renamed and reordered copies sit 0.1 or more above the threshold).
    return sorted(
        (a, b)
        for (a, b), n in shared.items()
        if n >= 2 and n >= SCREEN * threshold * min(size[a], size[b])
    )


def _highlight(
    a: dict[str, Fingerprint], b: dict[str, Fingerprint], slices: dict
) -> dict[str, tuple[str, str]]:
    from copydetect.utils import highlight_overlap

    out = {}
    for name, (sl_a, sl_b) in slices.items():
        hl_a, _ = highlight_overlap(a[name].raw_code, sl_a, "<mark>", "</mark>", escape_html=True)
        hl_b, _ = highlight_overlap(b[name].raw_code, sl_b, "<mark>", "</mark>", escape_html=True)
        out[name] = (hl_a, hl_b)
    return out


# -- what it writes ------------------------------------------------------------------------------


def write(out: OutputFolder | str | Path, report: Report) -> None:
    """``similarity.json`` (for the summary) and ``similarity.html`` (side by side)."""
    out = as_folder(out)
    data = {
        "students": report.students,
        "threshold": report.threshold,
        "contain": CONTAIN,
        "min_match": MIN_MATCH,
        "common_limit": report.common_limit,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "share_a": round(p.share_a, 4),
                "share_b": round(p.share_b, 4),
                "contained": p.contained,
            }
            for p in report.pairs
        ],
        "groups": [
            {"kind": g.kind, "students": g.students, "share": round(g.share, 4)}
            for g in report.groups
        ],
        "runtime_code": [
            {"student": s, "file": name, "reasons": reasons}
            for s, files in sorted(report.flagged.items())
            for name, reasons in files.items()
        ],
    }
    write_atomic(out.similarity_json, json.dumps(data, indent=1) + "\n")
    write_atomic(out.similarity_html, render_html(report))


def read(out: OutputFolder | str | Path) -> dict | None:
    try:
        data = json.loads(as_folder(out).similarity_json.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        return None
    for key in ("groups", "runtime_code"):  # (a report written before they were added)
        if not isinstance(data.get(key), list):
            data[key] = []
    return data


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def names(students: list[str], shown: int = 12) -> str:
    """Students as a list in words, the first ``shown`` of them."""
    more = len(students) - shown
    listed = ", ".join(students[:shown])
    return listed + (f" and {more} more" if more > 0 else "")


def describe(reasons: list[str]) -> str:
    """A file's reasons to be read, for a person."""
    return "; ".join(reasons)


_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 110em; }
table.pair { width: 100%; table-layout: fixed; border-collapse: collapse; }
table.pair td { vertical-align: top; width: 50%; padding: 0 .5em; }
pre { font-size: 12px; background: #f6f6f6; padding: .5em; overflow-x: auto; }
mark { background: #ffd27a; }
.note { color: #444; }
"""


def _side_by_side(a: str, b: str, files: dict[str, tuple[str, str]]) -> list[str]:
    e = html.escape
    lines = []
    for name, (hl_a, hl_b) in files.items():
        lines += [
            f"<h3>{e(name)}</h3>",
            '<table class="pair"><tr>',
            f"<td><b>{e(a)}</b><pre>{hl_a}</pre></td>",
            f"<td><b>{e(b)}</b><pre>{hl_b}</pre></td>",
            "</tr></table>",
        ]
    return lines


def render_html(report: Report) -> str:
    e = html.escape
    same = [g for g in report.groups if g.kind == "same"]
    shared = [g for g in report.groups if g.kind == "shared"]
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Similar submissions: what is worth a look</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Similar submissions: what is worth a look</h1>",
        '<p class="note">Each pair below shares at least '
        f"{pct(report.threshold)} of each student's own code in <code>multihead.py</code> and "
        f"<code>crosscheck.py</code>, or one of the two has {pct(CONTAIN)} of its code in the "
        "other (the handed-out stubs, and code that more than "
        f"{report.common_limit} submissions share, are left out; renamed variables and "
        "reordered functions still match). What is compared is the code Python runs: "
        "comments, layout and line endings set aside, and the code a file builds at run "
        "time where the grader could decode it. Shared code is highlighted. Similar code is "
        "a reason to read both submissions, not evidence of copying: students may have "
        "worked from the same tutorial, the lecture's code or a study group. Talk to the "
        "students before concluding anything.</p>",
        f"<p>{report.students} submissions compared; {len(report.pairs)} pairs, "
        f"{len(same)} groups with the same code, {len(shared)} groups sharing code many "
        f"submissions hold and {len(report.flagged)} submissions whose code is not all in "
        "their text are worth a look.</p>",
    ]
    if report.flagged:
        lines += [
            "<h2>Code built at run time</h2>",
            '<p class="note">These files use what can build, load or reach code at run time '
            "(exec, eval, compile, importlib, a decoded blob, a coding declaration, a module "
            "beyond plain numerical code...), so what ran may not be the code their text "
            "shows. Read them; where the grader decoded code from their text, it is shown "
            "after the file and compared too.</p>",
            "<ul>",
        ]
        for s, files in sorted(report.flagged.items()):
            for name, reasons in files.items():
                lines.append(f"<li><b>{e(s)}</b>, {e(name)}: {e(describe(reasons))}</li>")
        lines.append("</ul>")
    if same:
        lines += [
            "<h2>The same code</h2>",
            '<p class="note">These submissions have the same code once names, comments, '
            "layout and the order of functions are set aside (listed whatever the class "
            "size).</p>",
            "<ul>",
            *(f"<li>{e(names(g.students, 100))}</li>" for g in same),
            "</ul>",
        ]
    if shared:
        lines += [
            "<h2>Code many submissions share</h2>",
            '<p class="note">Each group below is mostly code that more than '
            f"{report.common_limit} submissions hold, and each member has at least the share "
            "given of its code in another member's: one body of code in many submissions (a "
            "leaked or published solution, the lecture's code, a tutorial). Two members are "
            "shown side by side.</p>",
        ]
        for g in shared:
            lines.append(
                f"<h3>{len(g.students)} submissions, each at least {pct(g.share)} in another's"
                f"</h3><p>{e(names(g.students, 100))}</p>"
            )
            lines += _side_by_side(*g.shown, g.files)
    if report.pairs:
        lines.append("<h2>Pairs</h2>")
    for p in report.pairs[:SHOWN]:
        lines.append(
            f"<h2>{e(p.a)} and {e(p.b)}</h2><p>{pct(p.share_a)} of {e(p.a)}'s code and "
            f"{pct(p.share_b)} of {e(p.b)}'s code in common.</p>"
        )
        lines += _side_by_side(p.a, p.b, p.files)
    if len(report.pairs) > SHOWN:
        rest = len(report.pairs) - SHOWN
        lines.append(f"<p>{rest} more pairs are listed in similarity.json.</p>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"
