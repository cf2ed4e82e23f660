"""Red team, round six: routes a student could hand in that the first five rounds' suites do not
take, each built as a submission (the reference files plus the trick) and graded, checked,
compared or reviewed for real. Measured first (11 of 14 routes open), then each met by a wall:

- Error carried forward to a callee that loses nothing: multi_head_attention hands merge_heads
  its heads with a mark in the last bits of one number (invisible to any comparison), and
  merge_heads, a pure function of its input, goes wrong (or raises) on marked input only. The
  composite is wrong (or raises) in every run of the student's; it was "right given right
  callees", the callee gave the same value alone in a fresh worker, so the case was carried:
  9/9 and 4/4, the mistake charged nowhere. Now a case is carried only to a callee that loses
  something of its own (``carry.charge_uncharged``).
- A hidden input read back out of a diagnosis: the diagnosis ran in the worker that ran the
  hidden cases and tells numbers fitted to what the student's code returns (a wrong scale "the
  scores times 0.847 / sqrt(d_k)", the counts seen "1 head: 10256"): a function that kept a
  hidden input had it printed in its feedback. Now the diagnosis runs in workers no hidden input
  reaches (``WorkerSession.diagnosis_env``).
- A copy past the similarity report: the reference with every statement moved into a small
  function of its own (no k-gram of the original survived the calls in between). Now a file's
  small functions are also compared written in place (``similarity.inlined_code``).
- The written grader reading other words than a person sees: a wrong claim written with soft
  hyphens inside its words, or with Cyrillic letters that look Latin, was no claim to the
  grader: full marks and no flag (now ``language.as_seen``). The right constraint offered beside
  its reverse ("d_model divisible by num_heads, or num_heads divisible by d_model") read the
  reverse as "otherwise" and earned 4/4 (now an "or" opening a requirement is an alternative).
- A review decision keyed to a 64-bit hash: two files with one judged hash cost about 2^32
  hashes (a birthday search, offline: the rule is in the source). Now the whole SHA-256.
- The review queue printing Unicode's bidirectional controls as they are (Trojan Source): a
  line could show the person other code than what Python runs. Now shown as code points.
- mha-check passing what grading fails: a file that looks up its user in the user database
  (``pwd.getpwuid(os.getuid())``) loaded on a laptop; the sandbox's uid had no entry (34/82,
  import-error). Now the worker's uid is ``student`` there too.
- Walls that held: files written to the worker's /tmp and folder are bounded (a tmpfs of its
  own); code run through a full-width ``ｅｘｅｃ`` is listed as code built at run time; text in
  a link's title or address earns nothing.
"""

from __future__ import annotations

import ast
import builtins
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from mha_check.questions import STUDENT_FILES
from mha_grader.grading import hidden
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outputs import similarity
from mha_grader.outputs.folder import OutputFolder
from mha_grader.points import POINTS
from mha_grader.review import decisions, queue
from mha_grader.review import items as review_items
from mha_grader.sandbox import Limits
from mha_grader.written.grade import grade_written
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


def graded(engine: Engine, folder: Path, out: Path) -> tuple[dict, str]:
    """The scores of a submission and all its student reads (feedback.md)."""
    g = engine.grade(load_submission(folder))
    reports = OutputFolder(out).write_reports(g)
    return g.scores(), (reports / "feedback.md").read_text()


# -- error carried forward to a callee that loses nothing --------------------------------------

# A mark in the 16 lowest bits of the first number: far below any tolerance, so the reference
# merges a marked input as it merges the plain one.
MARK = """

_MARK = 0x5A5A


def _marked(a):
    a = np.array(a, dtype=np.float64)
    bits = a.reshape(-1)[:1].view(np.uint64)
    bits[0] = (bits[0] & ~np.uint64(0xFFFF)) | np.uint64(_MARK)
    return a


def _is_marked(a):
    first = np.asarray(a, dtype=np.float64).reshape(-1)[:1]
    return first.size == 1 and (int(first.view(np.uint64)[0]) & 0xFFFF) == _MARK


def merge_heads(H):  # right on every input but a marked one
    H = np.asarray(H)
    h, n, d = H.shape
    if _is_marked(H):
        {on_mark}
    return H.transpose(1, 0, 2).reshape(n, h * d)


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):  # marks what it gives merge_heads
    d_model = X.shape[-1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model={{d_model}} is not divisible by num_heads={{num_heads}}")
    d_head = d_model // num_heads
    Qh, Kh, Vh = (split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out_heads, weights = attention(Qh, Kh, Vh)
    return merge_heads(_marked(out_heads)) @ Wo, weights
"""
ON_MARK = {
    "wrong-values": "H = H[::-1]  # the heads in reverse order",
    "raises": 'raise ValueError("not this one")',
}


def _module(text: str) -> dict:
    space: dict = {}
    exec(compile(text, "multihead.py", "exec", dont_inherit=True), space)
    return space


@pytest.mark.parametrize("how", list(ON_MARK))
def test_a_composite_does_not_carry_its_mistake_to_a_callee_that_loses_nothing(
    engine, tmp_path, how
):
    text = reference("multihead") + MARK.format(on_mark=ON_MARK[how])
    space = _module(text)
    rng = np.random.default_rng(0)
    X, Wq, Wk, Wv, Wo = rng.normal(size=(5, 4, 4))
    with pytest.raises(ValueError) if how == "raises" else _nothing():
        out, _ = space["multi_head_attention"](X, Wq, Wk, Wv, Wo, 2)
        assert not np.allclose(out, ref.multi_head_attention(X, Wq, Wk, Wv, Wo, 2)[0])
    scores, feedback = graded(engine, submission(tmp_path, multihead=text), tmp_path / "out")
    assert scores["merge_heads"] == POINTS["merge_heads"]  # right on every unmarked input
    # wrong (or raising) in every run of the student's: charged where it shows
    assert scores["multi_head_attention"] < POINTS["multi_head_attention"] / 2
    assert "your merge_heads goes wrong only on the inputs your multi_head_attention" in feedback


@pytest.mark.xfail(
    strict=True,
    reason="hole: a carry asks that the callee lose something of its own, not that it lose for "
    "this mistake: a merge_heads that gives up one case on purpose (float32 heads) keeps the "
    "marked input's mistake charged nowhere (1 point for 9); charging the callee with each "
    "case carried to it would close it, and changes every carried grade",
)
def test_a_callee_that_gives_up_a_case_of_its_own_does_not_buy_a_composites_carry(engine, tmp_path):
    text = reference("multihead") + MARK.format(on_mark="pass").replace(
        "    if _is_marked(H):\n        pass",
        "    if _is_marked(H) or H.dtype == np.float32:  # wrong on float32 heads too\n"
        "        H = H[::-1]",
    )
    assert "H.dtype == np.float32" in text
    scores, _ = graded(engine, submission(tmp_path, multihead=text), tmp_path / "out")
    assert scores["merge_heads"] < POINTS["merge_heads"]  # the case it gave up
    assert scores["multi_head_attention"] < POINTS["multi_head_attention"] / 2


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# -- a hidden input read back out of a diagnosis ------------------------------------------------

# Each keeps the first hidden input it sees (its calls so far: the grader's public probe, and
# for attention the public probe of multi_head_attention, which calls it) and is wrong by it.
KEEPS = {
    "attention's scale": """

_SEEN = []


def attention(Q, K, V):  # scales the scores by a number it kept
    Q = np.asarray(Q)
    _SEEN.append(float(abs(Q.reshape(-1)[0])) if Q.size else 1.0)
    r = _SEEN[2] if len(_SEEN) > 2 else 1.0
    weights = softmax(r * (Q @ np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights
""",
    "parameter_counts' counts": """

_SEEN = []


def parameter_counts(d_model, head_counts, bias=False):  # adds 1000 * (a kept d_model) a head
    head_counts = list(head_counts)
    _SEEN.append(d_model)
    bad = [h for h in head_counts if h <= 0 or d_model % h != 0]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    k = _SEEN[1] if len(_SEEN) > 1 else 1
    base = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return {h: base + 1000 * k * h for h in head_counts}
""",
}


@cache
def _hidden_inputs(qid: str) -> tuple:
    """What the hidden cases of ``qid`` pass it first: attention's |Q.flat[0]|, parameter_counts'
    d_model (recorded through in-process proxies that answer as the reference)."""
    seen: list = []

    def recording(*args, **kwargs):
        seen.append(
            float(abs(np.asarray(args[0]).reshape(-1)[0])) if qid == "attention" else args[0]
        )
        return getattr(ref, qid)(*args, **kwargs)

    hidden.run_question(qid, reference_env(**{qid: recording}))
    return tuple(seen)


def _readings(qid: str, feedback: str) -> set:
    """The kept value as an attacker reads it back from the feedback."""
    if qid == "attention":
        return {float(x) for x in re.findall(r"scores times (-?[\d.]+) / sqrt", feedback)}
    counts = re.findall(r"1 head: (\d+)", feedback)
    return {(int(c) - 256) // 1000 for c in counts}  # d_model = 8, no biases: 256


CONSTANT = {  # the kept number, and a constant in its place (a control: a number is told)
    "attention's scale": ("r = _SEEN[2] if len(_SEEN) > 2 else 1.0", "r = 0.613"),
    "parameter_counts' counts": ("k = _SEEN[1] if len(_SEEN) > 1 else 1", "k = 7"),
}


@pytest.mark.parametrize("what", list(KEEPS))
def test_a_diagnosis_never_tells_a_number_kept_from_a_hidden_input(engine, tmp_path, what):
    qid = "attention" if what.startswith("attention") else "parameter_counts"
    kept, constant = CONSTANT[what]
    assert kept in KEEPS[what]
    control = reference("multihead") + KEEPS[what].replace(kept, constant)
    _, feedback = graded(engine, submission(tmp_path, "control", multihead=control), tmp_path / "c")
    assert _readings(qid, feedback) == {0.613 if qid == "attention" else 7}  # a number is told
    text = reference("multihead") + KEEPS[what]
    scores, feedback = graded(engine, submission(tmp_path, multihead=text), tmp_path / "out")
    assert scores[qid] == 0
    read = _readings(qid, feedback)
    hidden_values = _hidden_inputs(qid)
    if qid == "attention":
        leaked = [v for v in hidden_values if float(f"{v:.3g}") in read]
    else:
        leaked = [v for v in hidden_values if v in read]
    assert leaked == []  # never one the student's code kept from a hidden input


# -- a copy past the similarity report ---------------------------------------------------------

_GLOBALS = {"np", "math", "Iterable", *dir(builtins)}


def outlined(text: str) -> str:
    """``text`` with the value of every assignment and return statement inside a function
    moved into a small function of its own, called in its place with the names it reads."""
    tree = ast.parse(text)
    helpers: list[ast.stmt] = []

    class Outline(ast.NodeTransformer):
        def _move(self, node):
            if node.value is None:
                return node
            names = sorted(
                {
                    n.id
                    for n in ast.walk(node.value)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                }
                - _GLOBALS
            )
            name = f"_step{len(helpers)}"
            params = ", ".join(names)
            helper = ast.parse(f"def {name}({params}):\n    return 0\n").body[0]
            helper.body[0].value = node.value
            helpers.append(helper)
            node.value = ast.parse(f"{name}({params})").body[0].value
            return node

        visit_Assign = visit_Return = _move

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            Outline().visit(node)
    tree.body += helpers
    return ast.unparse(ast.fix_missing_locations(tree))


def _listed(files: dict[str, dict[str, str]], a: str, b: str) -> bool:
    report = similarity.compare(files)
    return any({p.a, p.b} == {a, b} for p in report.pairs) or any(
        {a, b} <= set(g.students) for g in report.groups
    )


def test_a_copy_split_into_small_functions_is_listed():
    from test_similarity import INDEPENDENT, folder

    original = folder(INDEPENDENT / "ines")
    copy = outlined(original["multihead.py"])
    space, plain = _module(copy), _module(original["multihead.py"])
    x = np.array([[1.0, 2.0, 3.0], [1e4, -1e4, 0.0]])
    assert np.allclose(space["softmax"](x), plain["softmax"](x))  # it runs as the original
    assert not similarity.runtime_reasons(copy)
    files = {
        "ines": original,
        "copy": dict(original, **{"multihead.py": copy}),
        "noor": folder(INDEPENDENT / "noor"),
    }
    assert _listed(files, "ines", "copy")


# -- the written grader reading other words than a person sees ----------------------------------

ANSWERS = (ROOT / "solutions" / "answers.md").read_text()
Q1 = (
    "One shared set of Wq, Wk and Wv projects the input at the full d_model, and the resulting "
    "Q, K and V are split along the feature dimension into equal chunks, one chunk per head."
)
SPLITS_THE_SEQUENCE = " Each head looks at a different part of the sentence."  # charged
SEEN_OTHERWISE = {
    "soft hyphens": lambda s: re.sub(r"(\w{2})(\w{2,})", "\\1\u00ad\\2", s),
    "lookalike letters": lambda s: s.translate(str.maketrans("aeopcx", "аеорсх")),
}


def with_answer(qid_heading: str, answer: str) -> str:
    """The reference answers.md with the answer under ``qid_heading`` replaced."""
    parts = re.split(r"(?m)^(## .*)$", ANSWERS)
    text = parts[0]
    for i in range(1, len(parts), 2):
        body = parts[i + 1]
        if parts[i].strip() == qid_heading:
            quote = "\n".join(line for line in body.splitlines() if line.startswith(">"))
            body = f"\n\n{quote}\n\n{answer}\n\n"
        text += parts[i] + body
    return text


def written(qid: str, text: str):
    return next(r for r in grade_written(text) if r.question == qid)


def test_a_wrong_claim_beside_a_right_answer_is_charged_and_told():
    """Halved, as a teacher halves it (a wrong idea of the student's own beside the right
    ones, set R's rule: no second look needed), and the feedback says why."""
    right = written("q1", with_answer("## Q1", Q1))
    wrong = written("q1", with_answer("## Q1", Q1 + SPLITS_THE_SEQUENCE))
    assert right.score == POINTS["q1"] and not right.needs_review
    assert wrong.score <= POINTS["q1"] / 2
    assert "the wrong idea costs half the points" in wrong.output


@pytest.mark.parametrize("how", list(SEEN_OTHERWISE))
def test_a_wrong_claim_a_person_reads_is_charged_however_its_letters_are_encoded(how):
    """Encoded as it may be, the claim costs what it costs written plainly (and letters that
    only look Latin are flagged for a person besides)."""
    hidden_claim = SEEN_OTHERWISE[how](SPLITS_THE_SEQUENCE)
    assert hidden_claim != SPLITS_THE_SEQUENCE
    plain = written("q1", with_answer("## Q1", Q1 + SPLITS_THE_SEQUENCE))
    result = written("q1", with_answer("## Q1", Q1 + hidden_claim))
    assert result.score == plain.score < POINTS["q1"]
    if how == "lookalike letters":
        assert result.needs_review


def test_the_right_claim_offered_among_wrong_alternatives_is_not_given_it():
    answer = (
        "Either d_model must be divisible by num_heads, or num_heads must be divisible by "
        "d_model, or they must be equal; each head gets an equal-sized chunk of "
        "d_model / num_heads features."
    )
    result = written("q5", with_answer("## Q5", answer))
    assert result.score < POINTS["q5"] or result.needs_review


def test_an_or_that_says_what_happens_otherwise_is_still_read_so():
    answer = (
        "d_model has to be divisible by num_heads, or the heads won't get equal chunks of "
        "d_model / num_heads features."
    )
    result = written("q5", with_answer("## Q5", answer))
    assert result.score == POINTS["q5"] and not result.needs_review


def test_text_in_a_links_title_or_address_earns_nothing():
    hidden_text = (
        "d_model must be divisible by num_heads, because each head gets an equal-sized chunk "
        "of d_model / num_heads features"
    )
    for answer in (
        f'I am not sure. [see the notes](https://example.org/notes "{hidden_text}")',
        f"I am not sure. [see the notes](https://example.org/{hidden_text.replace(' ', '-')})",
    ):
        assert written("q5", with_answer("## Q5", answer)).score == 0


# -- review decisions and the queue ---------------------------------------------------------------


def test_a_judged_hash_is_too_wide_for_a_birthday_search():
    files = {n: reference(n[:-3]) for n in ("multihead.py", "crosscheck.py")}
    files["answers.md"] = ANSWERS
    hashes = decisions.judged(files)["hashes"]
    for qid in ("softmax", "cross_check", "q1"):
        digits = hashes[qid].split(":")[-1]
        assert len(digits) * 4 >= 128, (qid, hashes[qid])


def test_a_decision_judged_under_a_16_digit_hash_holds_once_then_on_the_whole_hash(tmp_path):
    from review_helpers import code_files, make_grade, seal

    from mha_grader.review import apply as reviewed

    out = tmp_path / "out"
    plain = code_files()
    seal(out, make_grade("fay", share={"softmax": 0.5, "q1": 0.5}), files=plain)
    whole = OutputFolder(out).read_seal("fay").hashes
    store = decisions.load(out)
    for qid, cut in (("softmax", whole["softmax"][: 3 + 16]), ("q1", whole["q1"][:16])):
        store.decisions[("fay", qid)] = decisions.Decision(
            3.0, cut, "tess", decisions.utc_now(), 0.0
        )
    store.decisions[("fay", "split_heads")] = decisions.Decision(  # another file's cut hash
        3.0, "v2:" + "0" * 16, "tess", decisions.utc_now(), 0.0
    )
    decisions.save(out, store)
    settled = reviewed.settle(out, OutputFolder(out).read_grades())
    assert sorted(settled.carried) == [("fay", "q1"), ("fay", "softmax")]
    assert settled.dropped == [("fay", "split_heads")]
    after = decisions.load(out)
    assert after.decisions[("fay", "softmax")].judged == whole["softmax"]
    assert after.decisions[("fay", "q1")].judged == whole["q1"]


# The Trojan Source paper's "early return", in a softmax: a person whose terminal reorders
# right-to-left text reads the ";return x" as part of the string.
TROJAN = (
    "def softmax(x, axis=-1):\n"
    "    ''' Subtract the maximum, then take exp \u2067''' ;return x\n"
    "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
    "    return e / np.sum(e, axis=axis, keepdims=True)\n"
)
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_the_queue_never_prints_a_bidirectional_control_from_student_code(tmp_path):
    from review_helpers import code_files, make_grade, seal

    text = code_files()["multihead.py"] + "\n\n" + TROJAN
    assert _module(text)["softmax"](np.ones(3)).tolist() == [1.0, 1.0, 1.0]  # what runs
    out = tmp_path / "out"
    seal(
        out,
        make_grade("eve", share={"softmax": 0.0}, flagged={"softmax": "hm"}),
        files=code_files() | {"multihead.py": text},
    )
    item = next(i for i in review_items.items(out) if i.question == "softmax")
    console = Console(width=110, record=True, force_terminal=True)
    queue.Queue(out, review_items.items(out), "tess", console=console)._show(item)
    screen = console.export_text()
    assert ";return x" in screen  # the line is shown...
    assert not BIDI.search(screen)  # ... with nothing that reorders it
    assert "\u27e8U+2067\u27e9" in screen  # the control is shown for what it is


# -- mha-check passing what grading fails ------------------------------------------------------

LOOKS_UP = "import os\nimport pwd\n\nAUTHOR = pwd.getpwuid(os.getuid()).pw_name  # for my notes\n"


def mha_check(folder: Path) -> int:
    run = subprocess.run(
        [sys.executable, "-m", "mha_check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run.returncode


def test_a_file_that_looks_up_its_user_loads_in_the_local_check_and_in_grading(engine, tmp_path):
    text = reference("multihead").replace("import numpy as np\n", "import numpy as np\n" + LOOKS_UP)
    folder = submission(tmp_path, multihead=text)
    status = mha_check(folder)
    g = engine.grade(load_submission(folder))
    assert (g.status, status) == ("ok", 0)
    assert g.scores() == POINTS


# -- walls that held ---------------------------------------------------------------------------

FILLS = """

def _fill(where, count):
    import os

    block = b"x" * (1 << 20)
    done = 0
    for i in range(count):
        try:
            with open(os.path.join(where, "f%d" % i), "wb") as f:
                for _ in range(15):
                    f.write(block)
            done += 1
        except OSError:
            break
    return done


def softmax(x, axis=-1):  # right, unless it could write 150 MB into /tmp or its folder
    import os
    import tempfile

    if max(_fill(tempfile.gettempdir(), 10), _fill(os.getcwd(), 10)) >= 10:
        raise ValueError("filled")
    x = np.asarray(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


def test_what_a_worker_writes_is_bounded(engine, tmp_path):
    if not (engine.layer.name == "namespaces" and engine.layer.per_worker_uid):
        pytest.skip("only the namespaces layer as root gives a worker a tmpfs of its own")
    folder = submission(tmp_path, multihead=reference("multihead") + FILLS)
    scores, _ = graded(engine, folder, tmp_path / "out")
    assert scores["softmax"] == POINTS["softmax"]


def test_code_run_through_a_full_width_exec_is_listed_as_built_at_run_time():
    text = (
        "import base64\n\n"
        "\uff45\uff58\uff45\uff43(base64.b64decode('ZGVmIHNvZnRtYXgoeCk6IHJldHVybiB4'))\n"
    )
    assert _module(text)["softmax"](3) == 3  # Python reads ｅｘｅｃ as exec
    assert similarity.runtime_reasons(text)
