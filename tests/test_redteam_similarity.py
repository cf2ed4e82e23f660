"""The similarity report attacked as a student who copied would attack it (issue 22).

Each route hides a copy of a classmate's code from the report while the copy still runs as the
original does (each test first shows that, compiling the disguised file as Python compiles a
student's file). Before issue 22 every route here gave no pair and listed nothing: a long
comment at the top (the text was cut before comments were stripped), ``\\r`` line endings (the
reducer reset its import state only at ``\\n``), a coding declaration that turns comments into
code, statement separators and trailing commas, code padded with code of one's own, code
compressed and ``exec``'d (and its variants), and a leaked file in more copies than the common
limit (every shared fingerprint dropped as common, MOSS's ``-m`` and its weakness).

What the report must do instead: list the pair (the code Python runs is compared), list files
that build code at run time for a person whatever they resemble, report code many submissions
share as a group, and list the same code whatever the class size; while independently written
work stays unlisted (tests/test_similarity.py keeps the margins).
"""

import ast
import base64
import codecs
import io
import tokenize
import types
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_similarity import INDEPENDENT, folder, independent_class, recomment, reorder

from mha_grader.outputs import similarity
from mha_grader.outputs.similarity import CODE_FILES, compare, fingerprint_files

ROOT = Path(__file__).resolve().parent.parent
AUTHORS = sorted(d for d in (ROOT / "tests" / "data" / "authors").glob("*/*") if d.is_dir())
ORIGINAL = folder(INDEPENDENT / "ines")


def movable(code: str) -> str:
    """``code`` that still runs with something before it (no ``from __future__`` import)."""
    return code.replace("from __future__ import annotations\n", "")


def rename(code: str) -> str:
    """Every variable a function assigns, renamed (parameters, attributes, keyword arguments
    and everything outside functions kept); the rest of the text as it was."""
    tree = ast.parse(code)
    stored: set[str] = set()
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef):
            params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
            stored |= {
                n.id
                for n in ast.walk(func)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            } - params
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits = []
    depth, previous = 0, None
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        following = tokens[i + 1].string if i + 1 < len(tokens) else ""
        keyword_argument = depth > 0 and following == "="
        if tok.type == tokenize.NAME and tok.string in stored and previous != ".":
            if not keyword_argument:
                edits.append((starts[tok.start[0] - 1] + tok.start[1], len(tok.string)))
        previous = tok.string
    for at, n in reversed(edits):
        code = code[:at] + "tmp_" + code[at : at + n][::-1] + code[at + n :]
    return code


COPY = rename(ORIGINAL["multihead.py"])


def disguise(files: dict[str, str]) -> dict[str, str]:
    """Renamed, reordered and re-commented: a copy as a student would disguise it."""
    return {name: recomment(reorder(rename(text))) for name, text in files.items()}


def runs_as_the_original(text: str) -> None:
    """The disguised multihead.py, compiled as Python compiles a file (bytes: its coding
    declaration honoured) and run, defines a softmax that computes what the original's does."""
    module = types.ModuleType("multihead")
    exec(compile(text.encode("utf-8"), "multihead.py", "exec"), module.__dict__)
    reference = types.ModuleType("reference")
    exec(compile(ORIGINAL["multihead.py"], "multihead.py", "exec"), reference.__dict__)
    x = np.array([[1.0, 2.0, 3.0], [1e4, -1e4, 0.0]])
    assert np.allclose(module.softmax(x), reference.softmax(x))
    assert np.allclose(module.split_heads(np.eye(4), 2, 2), reference.split_heads(np.eye(4), 2, 2))


def listed(report, a: str = "ines", b: str = "copy") -> bool:
    return any({p.a, p.b} == {a, b} for p in report.pairs)


def with_copy(multihead: str, **others) -> dict:
    """The original, the copy (its multihead.py replaced) and an independent student."""
    copy_files = dict(ORIGINAL, **{"multihead.py": multihead})
    return {"ines": ORIGINAL, "copy": copy_files, "noor": folder(INDEPENDENT / "noor"), **others}


# -- the text as Python reads it ---------------------------------------------------------------


def test_a_long_comment_at_the_top_does_not_hide_a_copy():
    text = "# " + "notes " * 40_000 + "\n" + disguise(ORIGINAL)["multihead.py"]
    assert len(text) > 200_000
    runs_as_the_original(text)
    assert listed(compare(with_copy(text)))


def test_a_long_docstring_or_many_comment_lines_at_the_top_do_not_hide_a_copy():
    padded = '"""' + "A long story.\n" * 20_000 + '"""\n' + movable(ORIGINAL["multihead.py"])
    lines = "# a line of notes\n" * 20_000 + ORIGINAL["multihead.py"]
    runs_as_the_original(padded)
    assert listed(compare(with_copy(padded)))
    assert listed(compare(with_copy(lines)))


def test_carriage_return_line_endings_do_not_hide_a_renamed_copy():
    for extra in ("", "import itertools\n"):  # an odd or an even number of imports
        code = disguise(ORIGINAL)["multihead.py"]
        code = code.replace("import numpy as np\n", "import numpy as np\n" + extra)
        text = code.replace("\n", "\r")
        assert "\n" not in text
        runs_as_the_original(text)
        assert listed(compare(with_copy(text))), repr(extra)
    mixed = disguise(ORIGINAL)["multihead.py"].replace("\n", "\r\n", 40).replace("\n", "\r", 40)
    assert listed(compare(with_copy(mixed)))


def utf7_hidden(code: str) -> str:
    """Every line of ``code`` behind a ``#``: a file of comments to the eye, but Python decodes
    it as UTF-7, where ``+AAo-`` is a line break, so each comment ends at once and the line
    after it is code."""
    lines = code.split("\n")
    return "# -*- coding: utf-7 -*-\n" + "\n".join("#+AAo-" + x.replace("+", "+-") for x in lines)


def test_a_coding_declaration_that_turns_comments_into_code_does_not_hide_a_copy():
    text = utf7_hidden(rename(ORIGINAL["multihead.py"]))
    assert all(line.startswith("#") for line in text.splitlines())  # nothing but comments
    runs_as_the_original(text)
    report = compare(with_copy(text))
    assert listed(report)
    assert "coding declaration" in similarity.describe(report.flagged["copy"]["multihead.py"])


def separated(code: str) -> str:
    """``code`` with a ``;`` ending every simple statement and a trailing comma in every call
    with a keyword argument: the same program to Python."""
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    inserts = []
    opened: list[bool] = []  # per open bracket: a call with a keyword argument
    previous = None
    for tok in tokens:
        at = starts[tok.start[0] - 1] + tok.start[1]
        if tok.type == tokenize.NEWLINE and previous is not None:
            line = lines[tok.start[0] - 1].lstrip()
            if previous.string != ":" and not line.startswith("@"):
                inserts.append((at, ";"))
        elif tok.type == tokenize.OP and tok.string in "([{":
            opened.append(False)
        elif tok.type == tokenize.OP and tok.string == "=" and opened:
            opened[-1] = True
        elif tok.type == tokenize.OP and tok.string in ")]}":
            if opened.pop() and previous.string != ",":
                inserts.append((at, ","))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    for at, text in reversed(inserts):
        code = code[:at] + text + code[at:]
    return code


def test_statement_separators_and_trailing_commas_do_not_hide_a_copy():
    text = separated(COPY)
    assert text.count(";") > 30 and text.count(",)") > 5
    runs_as_the_original(text)
    assert listed(compare(with_copy(text)))


def test_code_of_ones_own_around_a_copy_does_not_dilute_it_away():
    """Padding: the copy with three times its length of working code of its own, around it."""
    junk = "".join(
        f"\n\ndef _helper_{i}(a, b):\n    c = a * {i % 7 + 2} - b // {i % 5 + 1}\n"
        f"    return [c + {i}, a ** {i % 3}, b]\n"
        for i in range(300)
    )
    text = junk + movable(reorder(COPY)) + junk.replace("_helper", "_aid")
    runs_as_the_original(text)
    report = compare(with_copy(text))
    assert listed(report)
    (pair,) = [p for p in report.pairs if {p.a, p.b} == {"ines", "copy"}]
    assert pair.contained and min(pair.share_a, pair.share_b) < 0.3  # diluted, still listed


def test_code_too_long_to_compare_in_full_is_listed_for_a_person():
    junk = "".join(
        f"\ndef _f{i}(a):\n    return a * {i} + {i * 7} - a // {i + 1}\n" for i in range(6000)
    )
    text = junk + movable(ORIGINAL["multihead.py"])
    report = compare(with_copy(text))
    (reason,) = [r for r in report.flagged["copy"]["multihead.py"] if "compared on the first" in r]
    assert "characters of code" in reason


# -- code built at run time ---------------------------------------------------------------------


def blob(code: str) -> str:
    return base64.b64encode(zlib.compress(code.encode())).decode()


# (name, the disguised multihead.py, whether the grader can decode the code it runs)
BUILT = [
    (
        "zlib and base64",
        f"import base64\nimport zlib\n\nexec(zlib.decompress(base64.b64decode({blob(COPY)!r})))\n",
        True,
    ),
    ("a plain string", f"exec({COPY!r})\n", True),
    (
        "a string in pieces",
        "_PARTS = [" + ", ".join(repr(COPY[i : i + 70]) for i in range(0, len(COPY), 70)) + "]\n"
        'exec("".join(_PARTS))\n',
        True,
    ),
    ("character codes", f'exec("".join(map(chr, {[ord(c) for c in COPY]})))\n', True),
    ("hex", f"exec(bytes.fromhex({COPY.encode().hex()!r}).decode())\n", True),
    (
        "rot13",
        f"import codecs\n\nexec(codecs.decode({codecs.encode(COPY, 'rot13')!r}, 'rot13'))\n",
        True,
    ),
    ("reversed", f"exec({COPY[::-1]!r}[::-1])\n", True),
    (
        "compile and eval",
        f"_code = compile({COPY!r}, 'm', 'exec')\neval(_code)\n",
        True,
    ),
    (
        "exec reached by a computed name",
        f"import builtins\n\ngetattr(builtins, 'ex' + 'ec')({COPY!r})\n",
        True,
    ),
    (
        "exec reached through __import__ and __dict__",
        f"__import__('built' + 'ins').__dict__['ex' + 'ec']({COPY!r})\n",
        True,
    ),
    (
        "importlib",
        "import importlib\n\n"
        f"importlib.import_module('zl' + 'ib')\nexec(importlib.import_module('zlib').decompress("
        f"importlib.import_module('base64').b64decode({blob(COPY)!r})))\n",
        True,
    ),
    (
        "exec in other letters",
        f"ｅｘｅｃ({COPY!r})\n",
        True,
    ),
    (
        "a key only known at run time",
        f"_KEY = len('attention')\n_DATA = {[b ^ 9 for b in COPY.encode()]}\n"
        "exec(bytes(b ^ _KEY for b in _DATA).decode())\n",
        False,
    ),
]


@pytest.mark.parametrize("how, text, decodable", BUILT, ids=[b[0] for b in BUILT])
def test_code_built_at_run_time_is_listed_for_a_person_and_compared_where_decoded(
    how, text, decodable
):
    runs_as_the_original(text)
    report = compare(with_copy(text))
    if decodable:
        assert listed(report), f"{how}: the decoded copy was not compared"
    assert "copy" in report.flagged, f"{how}: not listed for a person"
    assert report.flagged["copy"]["multihead.py"]
    assert "ines" not in report.flagged and "noor" not in report.flagged


def test_fingerprints_made_while_grading_carry_what_a_person_should_know():
    prints = fingerprint_files(dict(ORIGINAL, **{"multihead.py": BUILT[0][1]}), "copy")
    report = compare(with_copy(BUILT[0][1]), given={"copy": prints})
    assert report.flagged["copy"] and listed(report)
    html = similarity.render_html(report)
    assert "Code built at run time" in html and "as the grader decoded it" in html


# -- many copies, and the same code ---------------------------------------------------------------


def honest_class() -> dict[str, dict[str, str]]:
    """Independently written submissions: the calibration set and the authors' corpus (ines is
    left out: her code is the leaked file below)."""
    students = {f"ind_{s}": files for s, files in independent_class().items() if s != "ines"}
    for d in AUTHORS:
        students[d.name] = {n: (d / n).read_text() for n in CODE_FILES if (d / n).exists()}
    return students


def leaked_copies(n: int) -> dict[str, dict[str, str]]:
    """n copies of one leaked file: verbatim, renamed, or renamed, reordered and re-commented,
    in turn; all but the first three with a function of their own added."""
    ways = [lambda f: dict(f), lambda f: {k: rename(v) for k, v in f.items()}, disguise]
    copies = {}
    for i in range(n):
        files = ways[i % 3](ORIGINAL)
        if i >= 3:
            files["multihead.py"] += (
                f"\n\ndef _scaled_{i}(values, by={i}):\n"
                f"    out = [v * by + {i % 4} for v in values]\n"
                f"    return sum(out) / max(len(out), {i % 3 + 1})\n"
            )
        copies[f"leak{i:02d}"] = files
    return copies


def test_a_leaked_file_in_more_copies_than_the_common_limit_is_reported_as_a_group():
    sources = honest_class() | leaked_copies(11)
    report = compare(sources)
    assert report.common_limit == 10  # the eleven copies are code more than 10 hold: common
    shared = [g for g in report.groups if g.kind == "shared"]
    assert [g.students for g in shared] == [sorted(leaked_copies(11))]
    assert shared[0].share >= 0.75
    same = [g.students for g in report.groups if g.kind == "same"]
    assert same == [["leak00", "leak01", "leak02"]]  # names, comments and order set aside
    assert not [p for p in report.pairs if not p.a.startswith("leak")]


def test_a_leaked_file_in_thirty_copies_of_a_large_class_is_one_group():
    sources = honest_class() | leaked_copies(30)
    report = compare(sources, common_limit=25)  # a class of 500
    (shared,) = [g for g in report.groups if g.kind == "shared"]
    assert shared.students == sorted(leaked_copies(30))
    assert all(p.a.startswith("leak") and p.b.startswith("leak") for p in report.pairs)


def test_the_same_code_is_listed_whatever_the_class_size():
    sources = honest_class() | {
        "a": ORIGINAL,
        "b": dict(ORIGINAL, **{"multihead.py": COPY}),  # renamed
        "c": dict(ORIGINAL, **{"multihead.py": reorder(COPY)}),  # renamed and reordered
    }
    for limit in (1, 2, 10):  # even where every shared line counts as common
        report = compare(sources, common_limit=limit)
        same = [g.students for g in report.groups if g.kind == "same"]
        assert same == [["a", "b", "c"]], limit
    # Untouched stubs are the same code too, but none of it is the students' own.
    stubs = {name: (ROOT / "exercises" / name).read_text() for name in CODE_FILES}
    assert compare({"x": stubs, "y": dict(stubs), "z": dict(stubs)}).groups == []


def test_independent_work_is_never_grouped_flagged_or_paired():
    students = honest_class() | {"ines": ORIGINAL}
    for limit in (None, 1, 3):  # also when every shared line counts as common
        report = compare(students, common_limit=limit)
        assert report.pairs == [] and report.groups == [] and report.flagged == {}, limit


def test_raise_from_and_yield_from_are_not_imports_but_an_import_in_a_function_still_is():
    """`raise E from error` (AllenNLP's idiom) and `yield from` name no module: reading them as
    imports listed honest code as importing "error"."""
    code = ORIGINAL["multihead.py"] + (
        "\n\ndef _checked(n):\n    try:\n        assert n > 0\n"
        "    except AssertionError as error:\n        raise ValueError(n) from error\n"
        "\n\ndef _all(groups):\n    for g in groups:\n        yield from g\n"
    )
    plain = compare({"a": dict(ORIGINAL, **{"multihead.py": code})})
    assert plain.flagged == {}
    importing = code + "\n\ndef _later():\n    import zlib\n    return zlib\n"
    flagged = compare({"a": dict(ORIGINAL, **{"multihead.py": importing})}).flagged
    assert "imports zlib" in flagged["a"]["multihead.py"]


def test_the_summary_and_the_report_list_groups_and_code_built_at_run_time(tmp_path):
    from mha_grader.outputs.folder import OutputFolder
    from mha_grader.outputs.summary import _similar_section

    sources = honest_class() | leaked_copies(11)
    sources["copy"] = dict(ORIGINAL, **{"multihead.py": BUILT[0][1]})
    report = compare(sources)
    similarity.write(tmp_path, report)
    text = "\n".join(_similar_section(OutputFolder(tmp_path)))
    assert "**The same code**" in text and "leak00, leak01, leak02" in text
    assert (
        "**Code many submissions share**: " in text and "- 12 submissions, " in text
    )  # the decoded copy too
    assert "**Code built at run time**" in text and "- copy, multihead.py: " in text
    assert "imports zlib" in text and "not evidence of copying" in text
    html = (tmp_path / "similarity.html").read_text()
    assert "Code many submissions share" in html and "The same code" in html
    for word in ("plagiar", "cheat", "guilty"):
        assert word not in (text + html).lower()
