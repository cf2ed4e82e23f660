"""Red team, round five: routes a student could hand in that the first four rounds' suites do
not take, each built as a submission (the reference files plus the trick) and graded, checked,
compared or reviewed for real.

- mha-check and grading disagreeing on code that runs fine on a laptop: grading's sandbox caps
  threads and processes (16; a fork-context pool is refused outright), open files (64) and
  address space (2 GiB on top of torch); the local check caps none of them, so a thread pool, a
  process pool, eighty temporary files or an untouched scratch buffer pass ``mha-check`` and
  earn nothing in grading. A top-level ``getpass.getuser()`` (the sandbox's uid has no name)
  loads locally and costs every code question in grading. The other way round, a float64
  array in big-endian byte order or a ``longdouble`` array fails the local check's float32
  case and earns full marks in grading.
- A composite graded only while its callees are watched: the grader swaps a composite's
  callees for stand-ins during every graded call, and the code can tell (the caller's frame
  seen from softmax, or ``softmax is not`` the function the file defined): an attention that
  is wrong in every unwatched run earns 9/9, in the sandbox as in process.
- crosscheck.py rebinding multihead.py's functions (``import multihead; multihead.softmax =
  ...``): parameter_counts runs beside crosscheck.py and is graded as rebound, but a decision
  on it judges multihead.py only, so it holds when crosscheck.py changes what runs; and
  mha-check, which loads both files into one process, fails a softmax that grading's NumPy
  worker (which never loads crosscheck.py) gives full marks.
- Copies past the similarity report: the reference file with its docstrings dropped, or its
  type hints dropped (both are in the stubs every student starts from), or with
  ``from numpy import *`` and every ``np.`` dropped, shares too few k-grams to be listed.
- A whole solution written as strings and run by ``typing.get_type_hints`` (which evaluates a
  string type hint as Python): it earns full marks, and the report neither compares that code
  nor lists the file as code built at run time (``typing`` is not watched; ``inspect``'s
  ``get_annotations(eval_str=True)`` is).
- The review queue showing a right-looking softmax, with no note, while the file rebinds a
  NumPy function it calls (``np.exp = np.abs`` at the bottom; softmax scores 0).
- Walls that held: reports of NaN differences; a ``distinct_head_pairs`` that never looks at
  the weights; ``multihead.py`` importing itself to rebind a function (it fails check and
  grading alike); a copy reformatted, with ``@`` spelled ``np.matmul``, keywords reordered or
  ``numpy`` spelled out; the queue naming a swapped ``__code__``; a value stashed in System V
  shared memory (workers do not share it); a submission named after a classmate's SIS id (the
  roster row is left empty and named); answers that restate the questions, or parrot back the
  hints the feedback gave on a blank sheet.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES, WRITTEN_QUESTIONS
from mha_grader.grading import hidden
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outputs import similarity
from mha_grader.outputs.export import CANVAS, build_export, read_roster
from mha_grader.outputs.folder import OutputFolder
from mha_grader.points import POINTS
from mha_grader.review import decisions, queue
from mha_grader.sandbox import Limits
from mha_grader.written.grade import grade_written
from solutions import crosscheck as ref_cc
from solutions import multihead as ref
from tests.mutants.build import reference_env

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=10.0, import_timeout=10.0, submission_timeout=60.0)


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


def reference(stem: str) -> str:
    return (ROOT / "solutions" / f"{stem}.py").read_text()


def submission(root: Path, name: str = "sub", **replace: str) -> Path:
    """The reference files, each named one (``multihead``...) replaced by the text given."""
    folder = root / name
    folder.mkdir()
    for file in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / file, folder / file)
    for stem, text in replace.items():
        (folder / f"{stem}.py").write_text(text)
    return folder


def mha_check(folder: Path) -> tuple[int, dict[str, str]]:
    """mha-check's exit status on a folder and its word for each code question."""
    run = subprocess.run(
        [sys.executable, "-m", "mha_check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    words = {}
    for line in run.stdout.splitlines():
        m = re.match(r"\s+(\w+)\s{2,}(.*)$", line)
        if m and m.group(1) in CODE_QUESTIONS:
            words[m.group(1)] = m.group(2)
    return run.returncode, words


# -- mha-check and grading disagreeing -------------------------------------------------------

# Each function right, each doing one thing a laptop allows and the sandbox does not (or one
# thing the local check refuses and grading takes).
DIVERGENT = """

def softmax(x, axis=-1):  # a thread pool, as a student who read about parallel NumPy writes it
    from concurrent.futures import ThreadPoolExecutor

    x = np.asarray(x)
    with ThreadPoolExecutor(max_workers=24) as pool:
        done = [pool.submit(__import__("time").sleep, 0.01) for _ in range(24)]
        [d.result() for d in done]
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def distinct_head_pairs(weights, atol=1e-6):  # a few dozen scratch files, closed again
    import tempfile

    scratch = [tempfile.TemporaryFile() for _ in range(80)]
    for f in scratch:
        f.close()
    weights = np.asarray(weights)
    h = weights.shape[0]
    flat = weights.reshape(h, -1)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if np.abs(flat[i] - flat[j]).max() > atol
    ]


_SCRATCH = []


def parameter_counts(d_model, head_counts, bias=False):  # a scratch buffer, never touched
    if not _SCRATCH:
        _SCRATCH.append(np.empty(3 * 2**30 // 8))
    head_counts = list(head_counts)
    bad = [h for h in head_counts if h <= 0 or d_model % h != 0]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    return {h: 4 * d_model * d_model + (4 * d_model if bias else 0) for h in head_counts}


def split_heads(M, num_heads, d_head):  # a process pool, as multiprocessing's docs show it
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(abs, [1, 2])
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[-1] != num_heads * d_head:
        raise ValueError(f"expected width {num_heads * d_head}, got {M.shape}")
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)


def attention(Q, K, V):  # float64, in big-endian byte order
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return (weights @ V).astype(">f8"), weights.astype(">f8")


def merge_heads(H):  # numpy's longdouble
    H = np.asarray(H)
    h, n, d = H.shape
    return H.transpose(1, 0, 2).reshape(n, h * d).astype(np.longdouble)
"""


def disagreements(scores, words, qids) -> list:
    """The questions where grading's full marks and mha-check's "passed" differ."""
    return [
        (q, scores[q], words[q])
        for q in qids
        if (scores[q] == POINTS[q]) != words[q].startswith("passed")
    ]


LIMITED = ("softmax", "split_heads", "distinct_head_pairs", "parameter_counts")
OTHER_DTYPES = ("attention", "merge_heads")


@pytest.fixture(scope="module")
def divergent(engine, tmp_path_factory):
    folder = submission(
        tmp_path_factory.mktemp("divergent"), multihead=reference("multihead") + DIVERGENT
    )
    grade = engine.grade(load_submission(folder))
    _, words = mha_check(folder)
    return grade.scores(), words


@pytest.mark.xfail(
    strict=True,
    reason="hole: mha-check caps no threads, processes, open files or address space; grading "
    "does, so code passing the local check earns nothing",
)
def test_code_the_sandbox_limits_fails_the_local_check_as_it_fails_grading(divergent):
    scores, words = divergent
    assert disagreements(scores, words, LIMITED) == []


@pytest.mark.xfail(
    strict=True,
    reason="hole: a big-endian float64 or a longdouble array fails mha-check's form check and "
    "earns full marks in grading (the contract allows float64 and float32 only)",
)
def test_arrays_of_another_float_dtype_are_judged_alike_by_check_and_grading(divergent):
    scores, words = divergent
    assert disagreements(scores, words, OTHER_DTYPES) == []


NAMED_USER = "import getpass\n\nAUTHOR = getpass.getuser()  # for my lab notes\n"


@pytest.mark.xfail(
    strict=True,
    reason="hole: the sandbox's uid has no user name (and no USER/LOGNAME), mha-check runs "
    "with the student's: a top-level getpass.getuser() loads locally, import-error in grading",
)
def test_a_file_that_asks_for_the_user_name_fails_the_local_check_as_it_fails_grading(
    engine, tmp_path
):
    text = reference("multihead").replace(
        "import numpy as np\n", "import numpy as np\n" + NAMED_USER
    )
    folder = submission(tmp_path, multihead=text)
    g = engine.grade(load_submission(folder))
    status, _ = mha_check(folder)
    assert (g.status == "ok") == (status == 0), (g.status, status)


SELF_IMPORT = "\n\nimport multihead as _me\n\n_me.softmax = lambda x, axis=-1: np.ones_like(x)\n"


def test_a_multihead_that_imports_itself_to_rebind_softmax_fails_check_and_grading(
    engine, tmp_path
):
    folder = submission(tmp_path, multihead=reference("multihead") + SELF_IMPORT)
    g = engine.grade(load_submission(folder))
    status, _ = mha_check(folder)
    assert g.scores()["softmax"] == 0 and status != 0


# -- a composite graded while its callees are watched -----------------------------------------

# Each an attention that is wrong whenever it runs unwatched (in the student's own notebook, or
# in any use): the grader watches a composite's callee calls through stand-ins, and the code can
# tell when a stand-in is there.
CALLER_SEEN = """

def softmax(x, axis=-1):  # doubles the scores when attention calls it directly
    import sys

    x = np.asarray(x)
    if sys._getframe(1).f_code.co_name == "attention":
        x = x * 2.0
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)
"""
STAND_IN_SEEN = """

_ORIGINAL = [softmax]  # a list: no stand-in reaches it


def attention(Q, K, V):  # divides by d_k, unless its softmax has been swapped for a stand-in
    d_k = Q.shape[-1]
    scale = math.sqrt(d_k) if softmax is not _ORIGINAL[0] else d_k
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / scale, axis=-1)
    return weights @ V, weights
"""


@pytest.mark.xfail(
    strict=True,
    reason="hole: a composite is graded only while its callees are replaced by stand-ins "
    "(calls.Observed), which its code can see (the caller's frame, `softmax is not` the "
    "function it defined): an attention wrong in every unwatched run earns 9/9 (in the "
    "sandbox too)",
)
@pytest.mark.parametrize("trick", [CALLER_SEEN, STAND_IN_SEEN], ids=["caller", "stand-in"])
def test_an_attention_wrong_whenever_unwatched_does_not_earn_its_points(trick):
    functions = _functions(reference("multihead") + trick)
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4, 5))
    unwatched = functions["attention"](Q, K, V)[0]
    assert np.abs(unwatched - ref.attention(Q, K, V)[0]).max() > 0.1  # wrong when run plainly
    env = reference_env(softmax=functions["softmax"], attention=functions["attention"])
    assert score(hidden.run_question("attention", env)) < POINTS["attention"]


# -- crosscheck.py rebinding multihead.py's functions -------------------------------------------

REBINDS = (
    "\n\nimport multihead as _mh\n\n"
    "_mh.parameter_counts = lambda d_model, head_counts, bias=False: {h: 0 for h in head_counts}\n"
    "_mh.softmax = lambda x, axis=-1: x\n"
)


@pytest.fixture(scope="module")
def rebinding(engine, tmp_path_factory):
    folder = submission(
        tmp_path_factory.mktemp("rebinding"), crosscheck=reference("crosscheck") + REBINDS
    )
    grade = engine.grade(load_submission(folder))
    _, words = mha_check(folder)
    return grade.scores(), words


@pytest.mark.xfail(
    strict=True,
    reason="hole: parameter_counts runs beside crosscheck.py (the torch worker), which can "
    "rebind it, but a decision on it judges multihead.py only (decisions.code_files)",
)
def test_a_decision_on_parameter_counts_judges_the_crosscheck_that_rebinds_it(rebinding):
    scores, _ = rebinding
    assert scores["parameter_counts"] == 0  # crosscheck.py's binding is what was graded
    plain = {n: reference(n[:-3]) for n in ("multihead.py", "crosscheck.py")}
    rebound = plain | {"crosscheck.py": plain["crosscheck.py"] + REBINDS}
    hashes = [decisions.judged(f)["hashes"]["parameter_counts"] for f in (plain, rebound)]
    assert hashes[0] != hashes[1]


@pytest.mark.xfail(
    strict=True,
    reason="hole: mha-check imports crosscheck.py into the process that checks the NumPy "
    "questions, so its rebinding of softmax fails the local check; grading's NumPy worker "
    "never loads crosscheck.py and gives full marks",
)
def test_a_softmax_rebound_by_crosscheck_is_judged_alike_by_check_and_grading(rebinding):
    scores, words = rebinding
    assert disagreements(scores, words, ("softmax",)) == []


# -- a copy past the similarity report --------------------------------------------------------


def code_of(multihead: str) -> dict[str, str]:
    return {
        "multihead.py": multihead,
        "crosscheck.py": (ROOT / "exercises/crosscheck.py").read_text(),
    }


def pair_listed(copy: str) -> bool:
    """Whether the reference's multihead.py and ``copy`` of it are listed (a pair or a group),
    in a class with a third student who handed in the stubs."""
    stubs = {n: (ROOT / "exercises" / n).read_text() for n in ("multihead.py", "crosscheck.py")}
    report = similarity.compare(
        {"alice": code_of(reference("multihead")), "bob": code_of(copy), "carol": stubs}
    )
    listed = {(p.a, p.b) for p in report.pairs} | {tuple(g.students) for g in report.groups}
    return ("alice", "bob") in listed


class _Docstrings(ast.NodeTransformer):
    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            node.body = node.body[1:] or [ast.Pass()]
        return node


class _Annotations(ast.NodeTransformer):
    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.returns = None
        for a in node.args.args:
            a.annotation = None
        return node


class _Matmul(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.MatMult):
            return node
        func = ast.Attribute(value=ast.Name("np"), attr="matmul")
        return ast.Call(func=func, args=[node.left, node.right], keywords=[])


class _KeywordsReversed(ast.NodeTransformer):
    def visit_Call(self, node):
        self.generic_visit(node)
        node.keywords = node.keywords[::-1]
        return node


def rewritten(*how: type[ast.NodeTransformer]) -> str:
    tree = ast.parse(reference("multihead"))
    for transformer in how:
        tree = transformer().visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


@pytest.mark.parametrize(
    "how",
    [
        pytest.param((), id="reformatted"),
        pytest.param((_Matmul,), id="matmul-spelled-out"),
        pytest.param((_KeywordsReversed,), id="keywords-reordered"),
        pytest.param(
            (_Docstrings,),
            id="docstrings-dropped",
            marks=pytest.mark.xfail(
                strict=True,
                reason="hole: a docstring reduces to one token right after each def, so a copy "
                "without the stubs' docstrings (or with some added) breaks most k-grams",
            ),
        ),
        pytest.param(
            (_Annotations,),
            id="annotations-dropped",
            marks=pytest.mark.xfail(
                strict=True,
                reason="hole: the stubs' type hints are reduced like code, so a copy whose "
                "signatures drop them breaks most k-grams",
            ),
        ),
    ],
)
def test_a_copy_rewritten_mechanically_is_listed(how):
    assert pair_listed(rewritten(*how))


@pytest.mark.xfail(
    strict=True,
    reason="hole: 'np.exp' reduces to an attribute chain and 'exp' to one name, so "
    "`from numpy import *` with every `np.` dropped breaks every k-gram of a copy",
)
def test_a_copy_with_numpys_names_imported_unqualified_is_listed():
    star = re.sub(r"\bnp\.", "", reference("multihead")).replace(
        "import numpy as np\n", "import numpy as np\nfrom numpy import *\n"
    )
    assert pair_listed(star)


def test_a_copy_with_numpy_spelled_out_is_listed():
    spelled = re.sub(r"\bnp\.", "numpy.", reference("multihead"))
    assert pair_listed(spelled.replace("import numpy as np", "import numpy"))


# Every formula of the reference written as a string and run by typing.get_type_hints (which
# evaluates a string type hint as Python): the code is in no token the report compares, and
# nothing the report watches for code built at run time is named.
IN_TYPE_HINTS = """
# Multi-head attention in NumPy, each formula kept as a readable type hint.

import math
import typing

import numpy as np


def _run(formula, **scope):
    def formula_of(result: "lambda: " + formula):
        return result

    scope.setdefault("np", np)
    scope.setdefault("math", math)
    return typing.get_type_hints(formula_of, scope)["result"]()


def softmax(x, axis=-1):
    return _run(
        "(lambda e: e / np.sum(e, axis=axis, keepdims=True))"
        "(np.exp(np.asarray(x) - np.max(np.asarray(x), axis=axis, keepdims=True)))",
        x=x,
        axis=axis,
    )


def _check_split(M, num_heads, d_head):
    if M.ndim != 2 or M.shape[-1] != num_heads * d_head:
        raise ValueError(f"split_heads expects width {num_heads * d_head}, got {M.shape}")


def split_heads(M, num_heads, d_head):
    M = np.asarray(M)
    _check_split(M, num_heads, d_head)
    return _run("M.reshape(M.shape[0], h, d).transpose(1, 0, 2)", M=M, h=num_heads, d=d_head)


def merge_heads(H):
    return _run("np.asarray(H).transpose(1, 0, 2).reshape(np.asarray(H).shape[1], -1)", H=H)


def attention(Q, K, V):
    w = softmax(_run("Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])", Q=Q, K=K), axis=-1)
    return _run("(w @ V, w)", w=w, V=V)


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    d_model = X.shape[-1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d = d_model // num_heads
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
    out, w = attention(Qh, Kh, Vh)
    return _run("(merge_heads(out) @ Wo, w)", merge_heads=merge_heads, out=out, Wo=Wo, w=w)


def distinct_head_pairs(weights, atol=1e-6):
    return _run(
        "[(int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(np.abs("
        "f[:, None, :] - f[None, :, :]).max(axis=-1) > atol, k=1)))]",
        f=np.asarray(weights).reshape(np.asarray(weights).shape[0], -1),
        atol=atol,
    )


def parameter_counts(d_model, head_counts, bias=False):
    head_counts = list(head_counts)
    bad = [h for h in head_counts if h <= 0 or d_model % h != 0]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    counts = "{h: 4 * d * d + (4 * d if b else 0) for h in hs}"
    return _run(counts, d=d_model, hs=head_counts, b=bias)
"""


def _functions(text: str) -> dict:
    space: dict = {}
    exec(compile(text, "multihead.py", "exec", dont_inherit=True), space)
    return {q: space[q] for q in CODE_QUESTIONS if q in space}


@pytest.mark.xfail(
    strict=True,
    reason="hole: typing.get_type_hints evaluates strings as code, and neither 'typing' nor "
    "get_type_hints is watched: a whole solution in type-hint strings is neither compared "
    "nor listed as code built at run time",
)
def test_code_run_from_type_hint_strings_is_listed_as_built_at_run_time():
    functions = _functions(IN_TYPE_HINTS)
    for qid in ("softmax", "multi_head_attention"):  # a working solution
        results = hidden.run_question(qid, reference_env(**{qid: functions[qid]}))
        assert score(results) == POINTS[qid]
    assert similarity.runtime_reasons(IN_TYPE_HINTS)


# -- the review queue ---------------------------------------------------------------------------


def shown_note(tail: str) -> str:
    files = {n: reference(n[:-3]) for n in ("multihead.py", "crosscheck.py")}
    files["multihead.py"] += "\n\n" + tail
    return queue.what_ran(files, "softmax").note


def test_the_queue_says_when_the_functions_code_object_is_swapped():
    note = shown_note(
        "def _plain(x, axis=-1):\n    return x\n\n\nsoftmax.__code__ = _plain.__code__\n"
    )
    assert "__code__" in note and "what ran may be none of these" in note


@pytest.mark.xfail(
    strict=True,
    reason="hole: the queue shows softmax's right-looking def with no note while the file "
    "rebinds np.exp (softmax scores 0; a person reading the def would call the grader wrong)",
)
def test_the_queue_says_when_the_file_rebinds_a_numpy_function_its_code_calls():
    assert shown_note("np.exp = np.abs\n")


# -- walls that held ----------------------------------------------------------------------------


def score(results) -> float:
    return round(sum(r.score for r in results), 6)


@pytest.mark.parametrize("kind", ["nan everywhere", "nan weights", "nan except the zero key"])
def test_reports_of_nan_differences_earn_nothing(kind):
    nan = float("nan")

    def report(mha, X):
        honest = ref_cc.cross_check(mha, X)
        if kind == "nan everywhere":
            return {"output_max_abs_diff": nan, "weights_max_abs_diff": nan, "match": True}
        if kind == "nan weights":
            return honest | {"weights_max_abs_diff": nan}
        if mha.add_zero_attn:
            return honest
        return {"output_max_abs_diff": nan, "weights_max_abs_diff": nan, "match": True}

    assert score(hidden.run_question("cross_check", reference_env(cross_check=report))) == 0


@pytest.mark.parametrize(
    "pairs",
    [
        pytest.param(lambda w, atol=1e-6: [], id="none"),
        pytest.param(
            lambda w, atol=1e-6: [(i, j) for i in range(len(w)) for j in range(i + 1, len(w))],
            id="all",
        ),
        pytest.param(lambda w, atol=1e-6: [(0, j) for j in range(1, len(w))], id="first"),
    ],
)
def test_distinct_head_pairs_that_never_looks_at_the_weights_earns_nothing(pairs):
    env = reference_env(distinct_head_pairs=pairs)
    assert score(hidden.run_question("distinct_head_pairs", env)) == 0


# A value stashed in System V shared memory (the one store a worker's private /tmp does not
# cover) by a function that saw hidden inputs, printed by whichever worker imports the file
# after it: the import output is shown in the feedback.
SHM_STASH = r"""
import ctypes as _ct

_libc = _ct.CDLL(None, use_errno=True)
_libc.shmat.restype = _ct.c_void_p


def _segment():
    sid = _libc.shmget(0x5151, 64, 0o1666)
    p = _libc.shmat(sid, None, 0) if sid >= 0 else None
    return None if p in (None, _ct.c_void_p(-1).value) else p


_p = _segment()
print("sta" + "shed:", _ct.string_at(_p, 32).split(b"\0")[0].decode() if _p else "")


def softmax(x, axis=-1):
    x = np.asarray(x)
    p = _segment()
    if p:
        mark = ("le" + "ak%d" % int(abs(float(x.flat[0])) * 1e6)).encode()
        _ct.memmove(p, mark + b"\0", len(mark) + 1)
    return x * 0  # wrong, so that attention's check starts a fresh worker
"""


def test_a_value_stashed_in_shared_memory_never_reaches_the_feedback(engine, tmp_path):
    folder = submission(tmp_path, multihead=reference("multihead") + SHM_STASH)
    g = engine.grade(load_submission(folder))
    out = OutputFolder(tmp_path / "out").write_reports(g)
    shown = (out / "feedback.md").read_text() + (out / "results.json").read_text()
    assert "stashed" in shown  # the import output is shown...
    assert "leak" not in shown.lower()  # ... and no worker saw another's segment


def test_a_submission_named_after_a_classmates_sis_id_takes_no_grade_of_theirs(tmp_path):
    roster = 'Student,ID,SIS User ID,SIS Login ID,Section\n"Lovelace, Ada",101,S-1,ada,A\n'
    rows = [
        {"student": s, "total": t, "max_total": "82", "status": "ok", "needs_review": "false"}
        for s, t in (("ada", "10"), ("S-1", "82"))
    ]
    (tmp_path / "roster.csv").write_text(roster)
    header, parsed = read_roster(tmp_path / "roster.csv")
    result = build_export(rows, header, parsed, CANVAS)
    assert result.ambiguous and "82" not in result.text.splitlines()[-1]


def _answers_with(fill) -> str:
    """The hand-out's answers.md, each placeholder replaced by ``fill(question id, its quoted
    question)``."""
    template = (ROOT / "exercises" / "answers.md").read_text()
    parts = re.split(r"(?m)^(## .*)$", template)
    text = parts[0]
    for qid, i in zip(WRITTEN_QUESTIONS, range(1, len(parts), 2), strict=True):
        quoted = " ".join(line[2:] for line in parts[i + 1].splitlines() if line.startswith("> "))
        text += parts[i] + parts[i + 1].replace("_Write your answer here._", fill(qid, quoted))
    return text


def test_answers_that_restate_the_questions_or_parrot_the_hints_earn_nothing():
    blank = grade_written(_answers_with(lambda qid, quoted: "I am not sure about this one."))
    hints = {
        r.question: " ".join(
            line.strip()[2:] for line in r.output.splitlines() if line.strip().startswith("- ")
        )
        for r in blank
    }
    assert all(hints.values())  # the feedback does give hints...
    for fill in (lambda qid, quoted: quoted, lambda qid, quoted: hints[qid]):
        assert sum(r.score for r in grade_written(_answers_with(fill))) == 0  # ... not points
