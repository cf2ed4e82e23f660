"""The similarity report: copies (also renamed and reordered) are flagged, independently written
correct solutions are not.

The independent solutions are the ten students of ``tests/data/independent/`` (written apart,
in different styles, several following the stubs' hints closely, so their code converges) plus
two students assembled from the mutation suite's correct alternatives, plus the reference.
"""

import ast
import builtins
import inspect
import keyword
import os
import re
import subprocess
import sys
import textwrap
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from copydetect.utils import filter_code, get_token_coverage

from mha_grader.outputs import similarity
from mha_grader.outputs.similarity import CODE_FILES, THRESHOLD, compare, fingerprint, reduce_code
from tests.mutants import crosscheck_bugs, multihead_bugs

ROOT = Path(__file__).resolve().parent.parent
INDEPENDENT = ROOT / "tests" / "data" / "independent"
STUBS = {name: (ROOT / "exercises" / name).read_text() for name in CODE_FILES}
CONTRACT = {
    "softmax",
    "split_heads",
    "merge_heads",
    "attention",
    "multi_head_attention",
    "distinct_head_pairs",
    "parameter_counts",
    "weights_from_torch",
    "cross_check",
}


def folder(path: Path) -> dict[str, str]:
    return {name: (path / name).read_text() for name in CODE_FILES}


def _body(func) -> str:
    lines = textwrap.dedent(inspect.getsource(func)).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("def "))
    while not lines[i].rstrip().endswith(":"):
        i += 1
    return "\n".join(lines[i + 1 :]) + "\n"


def mutant_student(funcs) -> dict[str, str]:
    """The stubs with the given correct alternatives filled in, plus the helpers they call."""
    files = {}
    for name, module in (("multihead.py", multihead_bugs), ("crosscheck.py", crosscheck_bugs)):
        text = STUBS[name]
        used = ""
        for f in funcs:
            target = f.__name__.split("__")[0]
            marker = f'    # YOUR CODE HERE\n    raise NotImplementedError("{target}")\n'
            if marker in text:
                text = text.replace(marker, _body(f))
                used += _body(f)
        helpers = [
            textwrap.dedent(inspect.getsource(h))
            for n, h in vars(module).items()
            if n.startswith("_") and inspect.isfunction(h) and re.search(rf"\b{n}\(", used)
        ]
        files[name] = text + "\n\n" + "\n\n".join(helpers)
    return files


def independent_class() -> dict[str, dict[str, str]]:
    students = {d.name: folder(d) for d in sorted(INDEPENDENT.iterdir()) if d.is_dir()}
    students["reference"] = folder(ROOT / "solutions")
    m, c = multihead_bugs, crosscheck_bugs
    students["mutants_a"] = mutant_student(
        [
            m.softmax__float32_loop,
            m.split_heads__loop_slices,
            m.merge_heads__concatenate,
            m.attention__einsum,
            m.multi_head_attention__loop_over_heads,
            c.weights_from_torch__state_dict,
            c.cross_check__relative_tolerance,
        ]
    )
    students["mutants_b"] = mutant_student(
        [
            m.softmax__logsumexp,
            m.split_heads__array_split,
            m.merge_heads__hstack_loop,
            m.multi_head_attention__float32,
        ]
    )
    return students


# -- disguising a copy, as a student might -------------------------------------------------------

_KEEP = set(keyword.kwlist) | set(dir(builtins)) | CONTRACT | {"np", "torch", "math", "nn", "self"}


def rename(code: str) -> str:
    """Every variable, parameter and helper renamed (attributes and library names kept)."""

    def sub(m: re.Match) -> str:
        name = m.group(0)
        if name in _KEEP or (m.start() > 0 and code[m.start() - 1] == "."):
            return name
        return "my_" + name[::-1]

    return re.sub(r"\b[A-Za-z_]\w*\b", sub, code)


def reorder(code: str) -> str:
    """Functions in reverse order."""
    head, *funcs = re.split(r"(?m)^(?=def )", code)
    return head + "".join(reversed(funcs))


def recomment(code: str) -> str:
    return "\n".join(
        line + "  # checked" if "return" in line else line for line in code.split("\n")
    )


def disguise(files: dict[str, str]) -> dict[str, str]:
    return {name: recomment(reorder(rename(text))) for name, text in files.items()}


# -- tests ------------------------------------------------------------------------------------


def test_copied_and_renamed_reordered_copies_are_flagged_and_independent_work_is_not():
    original = folder(INDEPENDENT / "ines")
    sources = {
        "ines": original,
        "copy": dict(original),
        "disguised": disguise(original),
        "noor": folder(INDEPENDENT / "noor"),  # independent, and the closest to ines
    }
    assert sources["disguised"]["multihead.py"] != original["multihead.py"]
    report = compare(sources)
    flagged = {(p.a, p.b) for p in report.pairs}
    assert flagged == {("copy", "ines"), ("copy", "disguised"), ("disguised", "ines")}
    exact = next(p for p in report.pairs if (p.a, p.b) == ("copy", "ines"))
    assert exact.share_a == exact.share_b == 1.0


@pytest.mark.parametrize("student", sorted(d.name for d in INDEPENDENT.iterdir() if d.is_dir()))
def test_every_independent_solution_is_found_again_when_renamed_and_reordered(student):
    original = folder(INDEPENDENT / student)
    report = compare({"a": original, "b": disguise(original)})
    assert [(p.a, p.b) for p in report.pairs] == [("a", "b")]
    assert report.pairs[0].score >= THRESHOLD + 0.1  # calibrated margin (benchmarks/README.md)


def test_independently_written_correct_solutions_are_never_flagged():
    students = independent_class()
    n = len(students)
    report = compare(students)
    assert report.pairs == [] and report.groups == [] and report.flagged == {}
    # And with a margin: no pair comes within 0.1 of the threshold (benchmarks/README.md), nor
    # of the share that lists a pair where one is (nearly) all in the other.
    scores = compare(students, threshold=0.0, min_match=0, highlight=False)
    assert len(scores.pairs) <= n * (n - 1) // 2
    assert max(p.score for p in scores.pairs) <= THRESHOLD - 0.1
    assert max(max(p.share_a, p.share_b) for p in scores.pairs) <= similarity.CONTAIN - 0.1


def test_submissions_in_real_authors_styles_are_never_listed():
    """The submissions of tests/data/authors/ (each modelled on one public source) with the
    independent class: no pair, group or file listed. Two of them (the two modelled on GPT-2,
    written by one hand, with the same crosscheck.py) reach 65% of copydetect's measure, but
    their sampled fingerprints overlap by 40%, below the screen (52%)."""
    students = independent_class()
    authors = [d for d in sorted((ROOT / "tests" / "data" / "authors").glob("*/*")) if d.is_dir()]
    for d in authors:
        students[d.name] = {n: (d / n).read_text() for n in CODE_FILES if (d / n).exists()}
    assert len(authors) >= 36 and len(students) == 13 + len(authors)  # no name given twice
    report = compare(students)
    assert report.pairs == [] and report.groups == [] and report.flagged == {}
    scores = compare(students, threshold=0.0, min_match=0, highlight=False)
    assert max(max(p.share_a, p.share_b) for p in scores.pairs) <= similarity.CONTAIN - 0.1


def test_untouched_stubs_and_tiny_submissions_are_not_similar():
    softmax_only = dict(STUBS)
    softmax_only["multihead.py"] = STUBS["multihead.py"].replace(
        '    # YOUR CODE HERE\n    raise NotImplementedError("softmax")\n',
        "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
        "    return e / np.sum(e, axis=axis, keepdims=True)\n",
    )
    report = compare({"a": STUBS, "b": dict(STUBS), "c": softmax_only, "d": dict(softmax_only)})
    assert report.pairs == []


def test_code_shared_by_many_submissions_is_a_group_not_pairs():
    base = folder(INDEPENDENT / "tomas")
    sources = {f"s{i:02d}": dict(base) for i in range(12)}
    report = compare(sources, common_limit=10)
    assert report.pairs == []  # all twelve hold the same code: common, nothing singles a pair out
    assert [(g.kind, g.students) for g in report.groups] == [("same", sorted(sources))]
    assert len(compare(sources, common_limit=20).pairs) == len(list(combinations(sources, 2)))


def test_the_report_escapes_student_code_and_never_accuses():
    original = folder(INDEPENDENT / "kofi")
    original["multihead.py"] += '\n\ndef extra():\n    return "</pre><script>alert(1)</script>"\n'
    report = compare({"a": original, "b": dict(original)})
    html = similarity.render_html(report)
    assert "<script>" not in html and "&lt;/pre&gt;&lt;script&gt;" in html
    assert "worth a look" in html and "not evidence of copying" in html
    for word in ("plagiar", "cheat", "guilty"):
        assert word not in html.lower()


class _Plain(ast.NodeTransformer):
    """What the reduction sets aside, taken out of the tree: docstrings and other bare strings,
    type hints, ``pass``, and the module before a dotted name rooted at an imported name."""

    def __init__(self, tree: ast.AST):
        self.modules = {
            (alias.asname or alias.name).split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }

    def generic_visit(self, node):
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [
                    s
                    for s in body
                    if not isinstance(s, ast.Pass)
                    and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                ]
                setattr(node, name, kept or [ast.Expr(ast.Name("V"))])
        return node

    def visit_arg(self, node):
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.modules:
            return ast.Name(node.attr, node.ctx)
        return node


def plain(text: str) -> str:
    tree = ast.parse(text)
    return ast.unparse(ast.fix_missing_locations(_Plain(tree).visit(tree)))


def test_reduced_code_is_copydetects_filtered_text():
    # For code without f-strings, and without what a student can add or leave out without
    # changing what it does (docstrings, type hints, pass, the module before a dotted name: the
    # next test), the fast reduction gives exactly what copydetect's own tokenizer (pygments)
    # gives, so copydetect's thresholds mean the same thing; but for the separators Python lets
    # a student add or leave out (trailing commas, ";", parentheses around a whole value), which
    # it drops.
    for text in STUBS.values():
        filtered = filter_code(plain(text), "x.py", "python")[0].replace("1e-06", "1e-6")
        assert reduce_code(text)[0] == re.sub(r",(?=[)\]}])", "", filtered)  # (as unparsed)
    text = plain((ROOT / "solutions" / "crosscheck.py").read_text())
    filtered = re.sub(r",(?=[)\]}])", "", filter_code(text, "x.py", "python")[0])
    assert reduce_code(text)[0].replace("(", "").replace(")", "") == re.sub(r"[()]", "", filtered)
    assert reduce_code("f(a, b,);\ng(c,)\n")[0] == reduce_code("f(a, b)\ng(c)\n")[0]


# Each: code, and the same code with what a student can add or leave out mechanically.
MECHANICAL = [
    ("def f(x):\n    return x + 1\n", 'def f(x):\n    """Add one."""\n    return x + 1\n'),
    (
        "def f(x):\n    return x + 1\n",
        "def f(x):\n    'doc' 'string'\n    pass\n    return x + 1\n",
    ),
    (
        "def f(x, n=2, *a, k=lambda v: v, **kw):\n    y = x\n    return y\n",
        "def f(x: np.ndarray, n: 'int' = 2, *a: int, k: Callable[[int], int] = lambda v: v,"
        " **kw: dict[str, int | None]) -> tuple[np.ndarray, 'np.ndarray']:\n"
        "    y: np.ndarray = x\n    return y\n",
    ),
    ("def f(x):\n    return x, x\n", "def f(x):\n    return (x, x)\n"),
    ("if x > 0:\n    y = a + b\n", "if (x > 0):\n    y = (a + b)\n"),
    (
        "import numpy as np\nfrom numpy import *\ne = exp(x - max(x)) @ swapaxes(k, -1, -2)\n",
        "import numpy as np\nfrom numpy import *\n"
        "e = np.exp(x - np.max(x)) @ np.swapaxes(k, -1, -2)\n",
    ),
    (
        "from numpy.linalg import norm\nimport numpy as np\nv = norm(np.ones(3))\n",
        "from numpy.linalg import norm\nimport numpy as np\nv = np.linalg.norm(ones(3))\n",
    ),
]


@pytest.mark.parametrize("pair", MECHANICAL, ids=range(len(MECHANICAL)))
def test_what_a_student_can_add_or_leave_out_changes_nothing(pair):
    assert reduce_code(pair[0])[0] == reduce_code(pair[1])[0]


def test_code_in_a_type_hint_and_calls_and_f_strings_are_kept():
    for a, b in [
        ("def f(x):\n    return x\n", "def f(x: (lambda: run())()):\n    return x\n"),
        ("def f(x):\n    return x\n", "def f(x) -> 'lambda: 1 + 2':\n    return x\n"),
        ("y = 1\n", "y = 1\nf'{run()}'\n"),
        ("f(x)\n", "(f)(x)\n"),
    ]:
        assert reduce_code(a)[0] != reduce_code(b)[0]
    assert similarity.runtime_reasons("def f(x) -> 'lambda: 1 + 2':\n    return x\n")
    assert not similarity.runtime_reasons("def f(x: 'np.ndarray') -> list['int']:\n    return x\n")


def test_token_coverage_is_copydetects():
    text = folder(INDEPENDENT / "lars")["multihead.py"]
    fp = fingerprint(text, "x.py", similarity.stub_boilerplate()["multihead.py"])
    assert fp.token_coverage == get_token_coverage(fp.hash_idx, fp.k, len(fp.filtered_code))
    assert 0 < fp.token_coverage < len(fp.filtered_code)


def test_fingerprints_are_the_same_in_every_process():
    code = "import numpy as np\nfrom mha_grader.outputs.similarity import kgram_hashes\n"
    code += "print(int(kgram_hashes('x' * 30 + 'V=V.V(V)' * 20).sum()))"
    values = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
        )
        values.add(run.stdout.strip())
    assert len(values) == 1 and values != {""}
    assert np.array_equal(similarity.kgram_hashes("abc" * 20), similarity.kgram_hashes("abc" * 20))


@pytest.mark.parametrize(
    "code",
    [
        # torch-style checks over a module's attributes (set K's flash-attention author)
        'for name in ("in_proj_bias", "bias_k", "bias_v"):\n'
        "    if getattr(mha, name) is not None:\n"
        '        raise ValueError(f"module has {name}")\n',
        'for key in ["q_proj", "k_proj"]:\n    assert hasattr(layer, key)\n',
        "from types import SimpleNamespace\ncfg = SimpleNamespace(d_model=8)\n",
    ],
)
def test_names_taken_from_a_loop_over_string_literals_and_plain_types_are_not_runtime_code(code):
    assert similarity.runtime_reasons(code) == []


@pytest.mark.parametrize(
    "code",
    [
        # the loop's name also bound or used elsewhere: what getattr reads is not only literals
        'for name in ("a",):\n    pass\nname = "__glo" + "bals__"\ng = getattr(f, name)\n',
        'for name in ("a",):\n    other = name\ng = getattr(f, name)\n',
        "g = getattr(f, computed)\n",
        "import types\nf = types.LambdaType(code, {})\n",
        "from types import MethodType\n",
    ],
)
def test_a_getattr_whose_name_is_not_only_literals_or_types_building_functions_is_listed(code):
    assert similarity.runtime_reasons(code) != []
