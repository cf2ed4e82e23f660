"""mha-check, run as students run it (a subprocess), on good, untouched and broken folders."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mha_check import questions as check_questions
from mha_grader import points as grader_questions

ROOT = Path(__file__).resolve().parent.parent
CODE = list(check_questions.CODE_QUESTIONS)
WRITTEN = list(check_questions.WRITTEN_QUESTIONS)
MULTIHEAD_QS = [q for q, f in check_questions.CODE_QUESTIONS.items() if f == "multihead.py"]
CROSSCHECK_QS = [q for q, f in check_questions.CODE_QUESTIONS.items() if f == "crosscheck.py"]


def run_check(*args: str | Path, cwd: Path = ROOT, timeout: float = 120) -> tuple[int, str]:
    """Run `python -m mha_check ARGS`; return its exit status and everything it printed."""
    run = subprocess.run(
        [sys.executable, "-m", "mha_check", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return run.returncode, run.stdout + run.stderr


def lines_by_question(text: str) -> dict[str, str]:
    """Question id -> the rest of its report line, plus the indented message lines under it."""
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^  (\w+)\s+(\S.*)$", line)
        if m and m.group(1) in check_questions.QUESTION_IDS:
            current = m.group(1)
            found[current] = m.group(2)
        elif current and line.startswith("      "):
            found[current] += " " + line.strip()
        else:
            current = None
    return found


def student_folder(tmp_path: Path, name: str = "student") -> Path:
    """A copy of the reference solutions, laid out as a student's folder."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    for f in ("multihead.py", "crosscheck.py", "answers.md"):
        shutil.copy(ROOT / "solutions" / f, folder / f)
    return folder


def append(path: Path, code: str) -> int:
    """Append `code` to a file; return the line number where it starts."""
    text = path.read_text()
    path.write_text(text + "\n" + code)
    return text.count("\n") + 2


def line_of(path: Path, fragment: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if fragment in line)


@pytest.fixture(scope="module")
def reference_run() -> tuple[int, str]:
    return run_check("solutions")


@pytest.fixture(scope="module")
def stubs_run() -> tuple[int, str]:
    return run_check("exercises")


# ---------------------------------------------------------------------------- good and untouched


def test_question_ids_are_the_contracts_in_its_order_and_the_grader_uses_them():
    contract = "softmax, split_heads, merge_heads, attention, multi_head_attention, "
    contract += "distinct_head_pairs, parameter_counts, weights_from_torch, cross_check, "
    contract += "q1, q2, q3, q4, q5, challenge"
    assert check_questions.QUESTION_IDS == tuple(contract.split(", "))
    assert grader_questions.QUESTION_IDS is check_questions.QUESTION_IDS


def test_reference_folder_passes_everything_and_exits_0(reference_run):
    status, text = reference_run
    found = lines_by_question(text)
    assert list(found) == list(check_questions.QUESTION_IDS)  # contract order, one line each
    assert all(found[q].startswith("passed") for q in CODE)
    assert all(found[q].startswith("answered") for q in WRITTEN)
    assert status == 0
    assert "Traceback" not in text


def test_untouched_stubs_are_not_attempted_yet_and_exit_1(stubs_run):
    status, text = stubs_run
    found = lines_by_question(text)
    assert list(found) == list(check_questions.QUESTION_IDS)
    assert {q: found[q] for q in found} == {q: "not attempted yet" for q in found}
    assert status == 1
    assert "Traceback" not in text


def test_one_question_only(tmp_path):
    status, text = run_check("solutions", "--question", "split_heads")
    assert list(lines_by_question(text)) == ["split_heads"]
    assert status == 0


def test_console_script_and_default_folder(tmp_path):
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    mha_check = Path(sys.executable).parent / "mha-check"
    run = subprocess.run(
        [str(mha_check), "-q", "softmax", "-q", "q1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert lines_by_question(run.stdout) == {
        "softmax": "not attempted yet",
        "q1": "not attempted yet",
    }
    assert run.returncode == 1


def test_folder_holding_the_files_in_one_sub_folder(tmp_path):
    student_folder(tmp_path / "alice", "exercises")
    status, text = run_check(tmp_path / "alice", "-q", "merge_heads", "-q", "challenge")
    assert lines_by_question(text) == {
        "merge_heads": "passed (5 checks)",
        "challenge": lines_by_question(text)["challenge"],
    }
    assert lines_by_question(text)["challenge"].startswith("answered")
    assert status == 0


def test_unknown_question_is_refused_with_the_list_of_ids():
    status, text = run_check("solutions", "--question", "softmaxx")
    assert status == 2
    assert "invalid choice" in text and "split_heads" in text and "Traceback" not in text


def test_path_that_is_not_a_folder(tmp_path):
    status, text = run_check(tmp_path / "nothing")
    assert status == 2
    assert "is not a folder" in text and "Traceback" not in text


def test_a_zip_is_checked_as_submitted(tmp_path):
    folder = student_folder(tmp_path, "exercises")
    archive = tmp_path / "alice.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in folder.iterdir():
            zf.write(f, f"exercises/{f.name}")
    status, text = run_check(archive, "-q", "split_heads", "-q", "q2")
    assert "checking the files inside" in text
    assert lines_by_question(text)["split_heads"] == "passed (6 checks)"
    assert lines_by_question(text)["q2"].startswith("answered")
    assert status == 0
    (tmp_path / "broken.zip").write_bytes(b"not a zip")
    status, text = run_check(tmp_path / "broken.zip")
    assert status == 2 and "could not be unzipped" in text


# ---------------------------------------------------------------------------- broken functions


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory) -> tuple[int, str, dict[str, int]]:
    """One folder with a raising, a hanging, a wrong-shape and a half-written function."""
    folder = student_folder(tmp_path_factory.mktemp("mixed"))
    mh = folder / "multihead.py"
    where = {
        "softmax": append(mh, "def softmax(x, axis=-1):\n    return {}['nope']\n") + 1,
        "split_heads": append(
            mh, "def split_heads(M, num_heads, d_head):\n    while True:\n        pass\n"
        )
        + 2,
        "merge_heads": 0,
        "parameter_counts": append(
            mh, "def parameter_counts(d_model, head_counts, bias=False):\n    return helper()\n"
        ),
        "helper": append(mh, "def helper():\n    raise NotImplementedError\n") + 1,
    }
    append(mh, "def merge_heads(H):\n    print('debugging merge')\n    return H\n")
    answers = folder / "answers.md"
    text = answers.read_text().replace("## Q3", "## Notes")
    q4 = text.index("## Q4")
    q5 = text.index("## Q5")
    quote = text[q4:q5].split("\n\n")[1]
    text = text[:q4] + "## Q4\n\n" + quote + "\n\n_Write your answer here._\n\n" + text[q5:]
    answers.write_text(text)
    status, out = run_check(
        folder, *[f"-q{q}" for q in (*MULTIHEAD_QS, *WRITTEN)], "--time-limit", "1"
    )
    return status, out, where


def test_a_function_that_raises_shows_the_students_own_line(mixed_run):
    _, text, where = mixed_run
    line = lines_by_question(text)["softmax"]
    assert line.startswith("failed")
    assert (
        f"your code raised Python's KeyError: 'nope' at multihead.py, line {where['softmax']}"
        in line
    )
    assert "in softmax: return {}['nope']" in line
    assert "Traceback" not in text


def test_a_hanging_function_is_stopped_with_a_message(mixed_run):
    _, text, where = mixed_run
    line = lines_by_question(text)["split_heads"]
    assert line.startswith("failed")
    assert "did not finish within 1 s" in line
    lines = (where["split_heads"] - 1, where["split_heads"])  # the `while` or the `pass`
    assert any(f"stopped at multihead.py, line {n}, in split_heads" in line for n in lines)


def test_a_wrong_shape_is_described(mixed_run):
    _, text, _ = mixed_run
    line = lines_by_question(text)["merge_heads"]
    assert line.startswith("failed (4 of 5 checks)")
    assert "expected shape (n, num_heads*d_head) = (2, 4)" in line
    assert "shape (2, 2, 2)" in line
    assert "debugging merge" not in text  # the student's prints are kept out of the report


def test_a_function_calling_an_unwritten_helper_says_which(mixed_run):
    _, text, where = mixed_run
    line = lines_by_question(text)["parameter_counts"]
    assert "parameter_counts calls helper, which is not written yet" in line
    assert f"multihead.py, line {where['helper']}" in line


def test_written_answers_missing_or_not_attempted(mixed_run):
    status, text, _ = mixed_run
    found = lines_by_question(text)
    assert found["q3"].startswith("failed") and "no section for q3" in found["q3"]
    assert "## Q3" in found["q3"]
    assert found["q4"] == "not attempted yet"
    assert found["q5"].startswith("answered")
    assert status == 1


def test_show_output_prints_what_the_students_code_printed(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py", "def merge_heads(H):\n    print('debugging merge')\n    return H\n"
    )
    _, text = run_check(folder, "-q", "merge_heads", "--show-output")
    assert "your code printed:" in text and "debugging merge" in text


def test_a_missing_function_is_named_with_its_signature(tmp_path):
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "del distinct_head_pairs\n")
    status, text = run_check(folder, "-q", "distinct_head_pairs")
    line = lines_by_question(text)["distinct_head_pairs"]
    assert "multihead.py defines no function distinct_head_pairs(weights, atol=1e-6)" in line
    assert status == 1


# -------------------------------------------------------------------------------- broken files


def test_syntax_error_names_file_and_line_and_costs_only_dependent_questions(tmp_path):
    folder = student_folder(tmp_path)
    lineno = append(folder / "multihead.py", "def oops(:\n    pass\n")
    status, text = run_check(folder, "-q", "softmax", "-q", "cross_check", "-q", "q1")
    assert f"multihead.py has a syntax error at line {lineno}" in text
    assert "def oops(:" in text
    found = lines_by_question(text)
    assert found["softmax"].startswith("not checked")
    assert found["cross_check"].startswith("not checked")  # crosscheck.py imports multihead.py
    # crosscheck.py loads beside a stand-in, as in grading: what calls multihead.py is not
    # checked, weights_from_torch (which does not) is
    assert "cross_check calls multi_head_attention from multihead.py, which could not be" in text
    assert found["q1"].startswith("answered")
    assert status == 1 and "Traceback" not in text


def test_syntax_error_in_crosscheck_leaves_multihead_questions_alone(tmp_path):
    folder = student_folder(tmp_path)
    lineno = append(folder / "crosscheck.py", "x = = 1\n")
    status, text = run_check(folder, "-q", "attention", "-q", "weights_from_torch")
    assert f"crosscheck.py has a syntax error at line {lineno}" in text
    found = lines_by_question(text)
    assert found["attention"].startswith("passed")
    assert found["weights_from_torch"].startswith("not checked")
    assert status == 1


def test_missing_file_costs_only_its_questions(tmp_path):
    folder = student_folder(tmp_path)
    (folder / "crosscheck.py").unlink()
    (folder / "answers.md").unlink()
    status, text = run_check(folder)
    found = lines_by_question(text)
    assert all(found[q].startswith("passed") for q in MULTIHEAD_QS)
    assert all(found[q].startswith("not checked") for q in CROSSCHECK_QS + WRITTEN)
    assert "crosscheck.py is missing" in text and "answers.md is missing" in text
    assert status == 1 and "Traceback" not in text


def test_import_error_names_what_failed(tmp_path):
    folder = student_folder(tmp_path)
    lineno = append(folder / "multihead.py", "import numpyy\n")
    status, text = run_check(folder, "-q", "softmax")
    assert "multihead.py could not import what it needs" in text
    assert "No module named 'numpyy'" in text
    assert f"line {lineno}" in text
    assert status == 1 and "Traceback" not in text


def test_hang_at_import_is_stopped(tmp_path):
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "while True:\n    pass\n")
    status, text = run_check(folder, "-q", "softmax", "--time-limit", "1")
    assert "multihead.py did not finish loading within the time limit" in text
    assert lines_by_question(text)["softmax"].startswith("not checked")
    assert status == 1 and "Traceback" not in text


def test_exit_at_import_is_reported(tmp_path):
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "import sys\nsys.exit(3)\n")
    status, text = run_check(folder, "-q", "softmax")
    assert "multihead.py called exit() or sys.exit() while being imported" in text
    assert status == 1


def test_code_that_swallows_the_stop_is_given_up_on(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def softmax(x, axis=-1):\n    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n            pass\n",
    )
    status, text = run_check(folder, "-q", "softmax", "--time-limit", "0.5")
    assert "keeps running after being stopped" in text
    assert status == 1 and "Traceback" not in text


def test_otter_format_is_loaded_without_the_rest_of_otter():
    code = (
        "import sys; from mha_check.otter_format import exception_test_file_class as f; "
        "c = f(); from otter.test_files import test_case; "
        "print(c.__module__, test_case.__module__, 'pandas' in sys.modules, "
        "'otter.api' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == [
        "otter.test_files.exception_test",
        "otter.test_files.exception_test",
        "False",
        "False",
    ]


def test_bundle_layout_runs_with_python_dash_m_and_finds_the_shipped_tests(tmp_path):
    """As unzipped by a student: mha_check/ beside exercises/ (stubs and tests/)."""
    shutil.copytree(ROOT / "mha_check", tmp_path / "mha_check")
    shutil.copytree(ROOT / "exercises", tmp_path / "exercises")
    status, text = run_check("-q", "split_heads", cwd=tmp_path)
    assert f"public tests from {(tmp_path / 'exercises' / 'tests').resolve()}" in text
    assert lines_by_question(text) == {"split_heads": "not attempted yet"}
    assert status == 1


def test_mha_check_never_imports_the_grader_or_the_solutions():
    for path in (ROOT / "mha_check").glob("*.py"):
        source = path.read_text()
        for forbidden in ("mha_grader", "solutions"):
            assert not re.search(rf"^\s*(from|import)\s+{forbidden}\b", source, re.M), path.name


def test_output_printed_while_loading_is_shown_only_on_request(tmp_path):
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "print('hello from the top level')\n")
    _, quiet = run_check(folder, "-q", "softmax")
    _, loud = run_check(folder, "-q", "softmax", "--show-output")
    assert "hello from the top level" not in quiet
    assert "multihead.py printed while loading:" in loud and "hello from the top level" in loud


def test_classic_mistakes_are_named_on_their_question_line(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def split_heads(M, num_heads, d_head):\n"
        "    if M.shape[-1] != num_heads * d_head:\n"
        "        raise ValueError('width')\n"
        "    return M.reshape(num_heads, M.shape[0], d_head)\n\n\n"
        "def softmax(x, axis=-1):\n"
        "    e = np.exp(x - x.max(axis=0, keepdims=True))\n"
        "    return e / e.sum(axis=0, keepdims=True)\n",
    )
    status, text = run_check(folder, "-q", "softmax", "-q", "split_heads")
    found = lines_by_question(text)
    assert found["softmax"].startswith("failed")
    assert (
        "The columns sum to 1 instead: did you normalise over the wrong axis?" in found["softmax"]
    )
    assert found["split_heads"].startswith("failed")
    assert "Head 0 holds rows of several tokens" in found["split_heads"]
    assert status == 1


def test_the_students_own_message_and_output_are_shown_without_terminal_escapes(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def merge_heads(H):\n"
        "    print('\\x1b[2Jcleared\\rback')\n"
        "    raise ValueError('\\x1b]0;title\\x07my own message')\n",
    )
    _, text = run_check(folder, "-q", "merge_heads", "--show-output")
    assert "my own message" in text and "clearedback" in text  # the student sees their words
    assert "\x1b" not in text and "\r" not in text


# ---------------------------------------------------------------------------- waiting on a callee


def test_a_composite_waits_on_a_callee_that_fails_its_own_checks(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=0, keepdims=True))\n"
        "    return e / e.sum(axis=0, keepdims=True)\n",
    )
    status, text = run_check(folder)
    lines = lines_by_question(text)
    assert lines["softmax"].startswith("failed")
    for q in ("attention", "multi_head_attention", "cross_check"):
        assert lines[q].startswith("waiting on "), lines[q]
        assert "Fix softmax first" in lines[q]
        assert "average_attn_weights" not in lines[q] and "batch_first" not in lines[q]
    assert lines["multi_head_attention"].startswith("waiting on attention")
    assert lines["split_heads"].startswith("passed")
    assert status == 1


def test_a_composite_checked_alone_still_waits_on_its_failing_callee(tmp_path):
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "def softmax(x, axis=-1):\n    return np.exp(x)\n")
    status, text = run_check(folder, "--question", "attention")
    lines = lines_by_question(text)
    assert list(lines) == ["attention"]
    assert lines["attention"].startswith("waiting on softmax"), lines["attention"]
    assert status == 1


def test_a_wrong_composite_with_right_callees_still_fails(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def attention(Q, K, V):\n"
        "    w = softmax(Q @ np.swapaxes(K, -1, -2))\n    return w @ V, w\n",
    )
    lines = lines_by_question(run_check(folder, "--question", "attention")[1])
    assert lines["attention"].startswith("failed"), lines["attention"]


def test_a_composite_that_never_calls_its_failing_callee_fails_on_its_own(tmp_path):
    # minGPT's style: attention typed inline in multi_head_attention, with a causal mask; the
    # student's attention is wrong too, but it is never called: nothing to wait for.
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def attention(Q, K, V):\n"
        "    w = softmax(Q @ np.swapaxes(K, -1, -2))\n    return w @ V, w\n\n\n"
        "def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):\n"
        "    if X.shape[1] % num_heads:\n        raise ValueError(num_heads)\n"
        "    n, d = X.shape[0], X.shape[1] // num_heads\n"
        "    q, k, v = (\n"
        "        (X @ W).reshape(n, num_heads, d).transpose(1, 0, 2) for W in (Wq, Wk, Wv)\n"
        "    )\n"
        "    s = q @ k.transpose(0, 2, 1) / np.sqrt(d)\n"
        "    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)\n"
        "    w = softmax(s)\n"
        "    return (w @ v).transpose(1, 0, 2).reshape(n, -1) @ Wo, w\n",
    )
    status, text = run_check(folder, "--question", "multi_head_attention")
    lines = lines_by_question(text)
    assert lines["multi_head_attention"].startswith("failed"), lines["multi_head_attention"]
    assert "attention first" not in lines["multi_head_attention"]
    assert status == 1


def test_a_composite_returning_the_wrong_form_from_right_form_callees_fails_on_its_own(tmp_path):
    # A loop over heads (Medium-style NumPy) that keeps its last head's weights: its attention
    # fails checks of its own (an unstable softmax), but every call returned the contract's
    # form, and the (n, n) weights are multi_head_attention's own doing: nothing to wait for.
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)\n"
        "\n\n"
        "def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):\n"
        "    if X.shape[1] % num_heads:\n        raise ValueError(num_heads)\n"
        "    d = X.shape[1] // num_heads\n"
        "    Q, K, V = X @ Wq, X @ Wk, X @ Wv\n"
        "    heads = []\n"
        "    for i in range(num_heads):\n"
        "        c = slice(i * d, (i + 1) * d)\n"
        "        head, attn = attention(Q[:, c], K[:, c], V[:, c])\n"
        "        heads.append(head)\n"
        "    return np.concatenate(heads, axis=-1) @ Wo, attn\n",
    )
    status, text = run_check(folder, "-q", "attention", "-q", "multi_head_attention")
    lines = lines_by_question(text)
    assert lines["attention"].startswith("waiting on softmax"), lines["attention"]
    assert lines["multi_head_attention"].startswith("failed"), lines["multi_head_attention"]
    assert "Fix softmax first" not in lines["multi_head_attention"]
    assert status == 1


def test_a_cross_check_failing_a_check_without_calling_its_failing_pipeline_fails_on_its_own(
    tmp_path,
):
    # bentrevett-style: torch.FloatTensor(X) whatever the module's dtype raises for float64
    # modules before multi_head_attention is called; the pipeline is wrong too (an unstable
    # softmax), but that check was never handed anything: it fails, and says so.
    folder = student_folder(tmp_path)
    append(folder / "multihead.py", "def softmax(x, axis=-1):\n    return np.exp(x)\n")
    text = (folder / "crosscheck.py").read_text()
    (folder / "crosscheck.py").write_text(
        text.replace("torch.as_tensor(np.asarray(X), dtype=dtype)", "torch.FloatTensor(X)")
    )
    assert "torch.FloatTensor(X)" in (folder / "crosscheck.py").read_text()
    status, out = run_check(folder, "-q", "cross_check")
    lines = lines_by_question(out)
    assert lines["cross_check"].startswith("failed"), lines["cross_check"]
    assert "fails without calling your multi_head_attention" in lines["cross_check"]
    assert "RuntimeError" in lines["cross_check"]
    assert status == 1


def test_the_contract_form_of_a_result_is_read_from_its_arguments():
    import numpy as np

    from mha_check.forms import right_form

    Q, K, V = np.ones((2, 4, 3)), np.ones((2, 5, 3)), np.ones((2, 5, 6))
    assert right_form("attention", (Q, K, V), {}, (np.ones((2, 4, 6)), np.ones((2, 4, 5))))
    assert right_form("attention", (Q, K, V), {}, (np.ones((2, 4, 6)), np.ones((4, 5)))) is False
    X, W = np.ones((3, 8)), np.ones((8, 8))
    args = (X, W, W, W, W, 2)
    assert right_form("multi_head_attention", args, {}, (X, np.ones((2, 3, 3))))
    assert right_form("multi_head_attention", args, {}, (X, np.ones((3, 3)))) is False
    assert right_form("multi_head_attention", (X, W, W, W, W, 3), {}, None) is None
    assert right_form("split_heads", (X, 2, 4), {}, np.ones((2, 3, 4)))
    assert right_form("split_heads", (X, 2, 4), {}, np.ones((3, 2, 4))) is False
    assert right_form("softmax", (Q,), {"axis": 0}, np.ones((2, 4, 3)))
    assert right_form("cross_check", (None, X), {}, {}) is None


def test_an_exception_is_named_by_where_its_class_comes_from():
    import numpy as np

    from mha_check.tracing import exception_name, exception_text

    def raised(f):
        try:
            f()
        except Exception as e:
            return e
        raise AssertionError("did not raise")

    class ShapeError(np.exceptions.AxisError):  # derived from NumPy's: still the student's own
        __module__ = "multihead"

    assert exception_text(raised(lambda: np.swapaxes(np.zeros((2, 3)), 2, 3))).startswith(
        "NumPy's AxisError: "
    )
    assert exception_name(raised(lambda: np.linalg.inv(np.zeros((2, 2))))) == "NumPy's LinAlgError"
    assert exception_text(raised(lambda: [][1])) == "Python's IndexError: list index out of range"
    assert exception_name(ShapeError("x")) == "ShapeError (an exception class of your own)"
    import json

    assert exception_name(raised(lambda: json.loads("{"))) == "json's JSONDecodeError"


def test_the_last_line_speaks_only_of_the_questions_checked(tmp_path, reference_run):
    folder = student_folder(tmp_path)
    (folder / "answers.md").write_text((ROOT / "exercises" / "answers.md").read_text())
    status, text = run_check(folder, "-q", "split_heads")  # no written answer in the folder
    last = text.strip().splitlines()[-1]
    assert status == 0 and "written answer" not in last, last
    assert last == (
        "All 1 done: split_heads passes its public tests (only the questions asked for were "
        "checked)."
    )
    _, everything = reference_run
    assert everything.strip().splitlines()[-1] == (
        f"All {len(CODE) + len(WRITTEN)} done: every public test passes and every written "
        "answer is in."
    )


def test_files_beside_the_students_that_grading_never_receives_are_named(tmp_path):
    folder = student_folder(tmp_path)
    (folder / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (folder / "notes.txt").write_text("to do\n")
    (folder / "README.md").write_text("the hand-out's\n")
    _, text = run_check(folder, "--question", "softmax")
    assert "helpers.py, notes.txt will not be graded" in text
    assert "README.md" not in text.split("will not be graded")[0].splitlines()[-1]


def test_every_file_the_hand_out_puts_beside_the_students_is_known_to_mha_check():
    from mha_check.folder import HANDOUT_FILES

    shipped = {p.name for p in (ROOT / "exercises").iterdir() if p.is_file()}
    assert shipped - set(check_questions.STUDENT_FILES) == set(HANDOUT_FILES)


def test_a_numpy_function_that_uses_torch_fails_its_checks_naming_torch(tmp_path):
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "import torch\n\n\ndef softmax(x, axis=-1):\n"
        "    return torch.softmax(torch.from_numpy(np.asarray(x, dtype=float)), dim=axis)"
        ".numpy()\n\n\ndef merge_heads(H):\n    import snowballstemmer  # noqa: F401\n"
        "    n = H.shape[1]\n    return H.transpose(1, 0, 2).reshape(n, -1)\n",
    )
    status, text = run_check(folder, "--question", "softmax", "--question", "merge_heads")
    lines = lines_by_question(text)
    assert lines["softmax"].startswith("failed") and "softmax uses torch" in lines["softmax"]
    assert "merge_heads uses snowballstemmer" in lines["merge_heads"]
    assert status == 1
    # parameter_counts may use torch: the same torch passes there
    status, text = run_check(folder, "--question", "parameter_counts")
    assert lines_by_question(text)["parameter_counts"].startswith("passed"), text


def test_a_composite_right_only_beside_its_callees_mistake_fails_on_its_own(tmp_path):
    # Sockeye's style (set N): attention leaves the scores unscaled and multi_head_attention
    # scales the queries itself, so the pair is right; grading runs the composite with a right
    # attention too and charges it, and mha-check says so instead of passing it.
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def attention(Q, K, V):\n"
        "    w = softmax(Q @ np.swapaxes(K, -1, -2))\n    return w @ V, w\n\n\n"
        "def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):\n"
        "    if X.shape[1] % num_heads:\n        raise ValueError(num_heads)\n"
        "    d = X.shape[1] // num_heads\n"
        "    q = split_heads(X @ Wq, num_heads, d) * d**-0.5\n"
        "    k, v = split_heads(X @ Wk, num_heads, d), split_heads(X @ Wv, num_heads, d)\n"
        "    out, w = attention(q, k, v)\n"
        "    return merge_heads(out) @ Wo, w\n",
    )
    lines = lines_by_question(run_check(folder, "--question", "multi_head_attention")[1])
    said = lines["multi_head_attention"]
    assert said.startswith("failed"), said
    assert "right attention" in said and "divided by sqrt(d_head) twice" in said, said


def test_a_cross_check_reporting_a_pipeline_other_than_the_students_fails(tmp_path):
    # praxis' style (set N): a wrong multi_head_attention, and a cross_check that reports a
    # right pipeline of its own: mha-check says the report is not the student's own pipeline's.
    folder = student_folder(tmp_path)
    append(
        folder / "multihead.py",
        "def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):\n"
        "    if X.shape[1] % num_heads:\n        raise ValueError(num_heads)\n"
        "    d = X.shape[1] // num_heads\n"
        "    q, k, v = (split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))\n"
        "    out, w = attention(q, k, v)\n"
        "    return merge_heads(out) @ Wo.T, w\n",
    )
    append(
        folder / "crosscheck.py",
        "def cross_check(mha, X):\n"
        "    x = torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)\n"
        "    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)\n"
        "    with torch.no_grad():\n"
        "        o, w = mha(x, x, x, need_weights=True, average_attn_weights=False)\n"
        "    o = (o[0] if mha.batch_first else o[:, 0]).double().numpy()\n"
        "    w = w[0].double().numpy()\n"
        "    d = mha.embed_dim\n"
        "    Wi = mha.in_proj_weight.detach().double().numpy()\n"
        "    Wo = mha.out_proj.weight.detach().double().numpy()\n"
        "    Xd = np.asarray(X, dtype=np.float64)\n"
        "    h = mha.num_heads\n"
        "    q, k, v = (split(Xd @ Wi[i * d:(i + 1) * d].T, h) for i in range(3))\n"
        "    s = q @ k.transpose(0, 2, 1) / np.sqrt(d // h)\n"
        "    p = np.exp(s - s.max(-1, keepdims=True))\n"
        "    p = p / p.sum(-1, keepdims=True)\n"
        "    ours = (p @ v).transpose(1, 0, 2).reshape(len(Xd), d) @ Wo.T\n"
        "    do, dw = float(np.abs(ours - o).max()), float(np.abs(p - w).max())\n"
        "    return {'output_max_abs_diff': do, 'weights_max_abs_diff': dw,\n"
        "            'match': do < 1e-4 and dw < 1e-4}\n\n\n"
        "def split(M, h):\n"
        "    return M.reshape(M.shape[0], h, -1).transpose(1, 0, 2)\n",
    )
    lines = lines_by_question(run_check(folder, "--question", "cross_check")[1])
    said = lines["cross_check"]
    assert said.startswith("failed"), said
    assert "does not report your own pipeline" in said, said
