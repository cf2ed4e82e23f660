"""lab_helpers (beside lab.ipynb): the student's files reloaded when they change, and an
experiment that stops with one sentence, never a traceback, when the student's code is not
written, broken or returns something unusable; the notebook's own errors still show."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A crosscheck.py without torch keeps these runs fast; it imports multihead like the real one.
CROSSCHECK = """\
from multihead import multi_head_attention


def weights_from_torch(mha):
    raise NotImplementedError


def cross_check(mha, X):
    raise NotImplementedError
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A bundle-like layout: mha_check/ beside exercises/, the reference multihead.py inside."""
    shutil.copytree(ROOT / "mha_check", tmp_path / "mha_check")
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    shutil.copy(ROOT / "exercises" / "lab_helpers.py", exercises)
    shutil.copy(ROOT / "solutions" / "multihead.py", exercises)
    (exercises / "crosscheck.py").write_text(CROSSCHECK)
    return exercises


def run(folder: Path, script: str) -> str:
    """Run `script` as notebook cells would, in `folder`; everything it printed."""
    prelude = "import lab_helpers as lab\nfrom pathlib import Path\n"
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(script)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MPLBACKEND": "Agg"},  # figures drawn, not shown
    )
    return result.stdout + result.stderr


def append(path: Path, code: str) -> int:
    """Append `code` to a file; the line number where it starts."""
    text = path.read_text()
    path.write_text(text + "\n" + textwrap.dedent(code))
    return text.count("\n") + 2


def test_saved_changes_are_reloaded_at_the_next_experiment_in_both_files(folder):
    out = run(
        folder,
        """
        mh, cc = lab.load_student_files()
        with lab.experiment("first"):
            print("A", mh.softmax([0.0, 0.0]).tolist())
        text = Path("multihead.py").read_text()
        Path("multihead.py").write_text(text + "\\ndef softmax(x, axis=-1):\\n    return 'new'\\n")
        with lab.experiment("second"):
            print("B", mh.softmax([0.0, 0.0]))
            print("C", cc.multi_head_attention is mh.multi_head_attention)
        with lab.experiment("third"):
            print("D", mh.softmax([0.0]))
        """,
    )
    assert "A [0.5, 0.5]" in out
    assert "B new" in out and "C True" in out and "D new" in out
    assert out.count("reloaded") == 1, out  # only when a file changed
    assert "Traceback" not in out


def test_a_stub_is_named_as_not_attempted_and_the_rest_is_skipped(folder):
    (folder / "multihead.py").write_text((ROOT / "exercises" / "multihead.py").read_text())
    out = run(
        folder,
        """
        mh, cc = lab.load_student_files()
        with lab.experiment("the worked example"):
            mh.multi_head_attention(None, None, None, None, None, 2)
            print("NOT REACHED")
        with lab.experiment("the cross-check"):
            cc.cross_check(None, None)
        """,
    )
    assert (
        "multi_head_attention in multihead.py is not attempted yet (it still raises "
        "NotImplementedError). Skipped the worked example." in out
    )
    assert "cross_check in crosscheck.py is not attempted yet" in out
    assert "NOT REACHED" not in out and "Traceback" not in out


def test_a_callee_not_written_yet_is_the_one_named(folder):
    append(folder / "multihead.py", "def split_heads(M, h, d):\n    raise NotImplementedError\n")
    out = run(
        folder,
        """
        import numpy as np
        mh, _ = lab.load_student_files()
        with lab.experiment("the heatmaps"):
            X = np.ones((3, 4))
            mh.multi_head_attention(X, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2)
        """,
    )
    assert "split_heads in multihead.py is not attempted yet" in out, out


def test_an_exception_in_the_students_code_names_their_line_without_a_traceback(folder):
    line = append(folder / "multihead.py", "def softmax(x, axis=-1):\n    return [][1]\n")
    out = run(
        folder,
        """
        mh, _ = lab.load_student_files()
        lab.table(["a"], [[1]])
        with lab.experiment("the heatmaps"):
            lab.table(["heads"], [[1]])
            mh.softmax([1.0])
        """,
    )
    assert (
        "Your code raised Python's IndexError: list index out of range at multihead.py, "
        f"line {line + 1}, in softmax: return [][1]. Skipped the rest of the heatmaps" in out
    ), out
    assert "Traceback" not in out


def test_a_file_that_does_not_load_is_reported_once_and_skips_every_experiment(folder):
    line = append(folder / "multihead.py", "def broken(:\n    pass\n")
    out = run(
        folder,
        """
        mh, cc = lab.load_student_files()
        with lab.experiment("the heatmaps"):
            mh.multi_head_attention(1, 2, 3, 4, 5, 6)
        with lab.experiment("the cross-check"):
            cc.weights_from_torch(None)
        print("END", hasattr(mh, "__wrapped__"))
        """,
    )
    assert f"multihead.py has a syntax error at line {line}" in out
    assert "Skipped the heatmaps." in out
    # crosscheck.py loads beside a stand-in for multihead.py, as in mha-check and grading: what
    # it defines is usable, what calls multihead.py's functions fails with the reason
    assert "crosscheck.py imports multihead.py" not in out
    assert "Skipped the cross-check." in out
    assert "END False" in out and "Traceback" not in out


@pytest.mark.parametrize(
    "returns, says",
    [
        ("None", "multi_head_attention returned None (is a `return` missing?); expected a tuple"),
        ("(X, X)", "gave weights of shape (3, 4); expected (num_heads, n, n) = (2, 3, 3)"),
        ("(X, 'weights')", "gave weights as a str, not an array of numbers"),
    ],
)
def test_a_result_the_experiment_cannot_use_is_described(folder, returns, says):
    append(
        folder / "multihead.py",
        f"def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):\n    return {returns}\n",
    )
    out = run(
        folder,
        """
        import numpy as np
        mh, _ = lab.load_student_files()
        with lab.experiment("the heatmaps"):
            X = np.ones((3, 4))
            out, weights = lab.result_pair(mh.multi_head_attention(X, X, X, X, X, 2))
            lab.head_weights(weights, 2, 3)
            print("NOT REACHED")
        """,
    )
    assert says in out and "Skipped the heatmaps." in out, out
    assert "NOT REACHED" not in out and "Traceback" not in out


def test_the_notebooks_own_mistakes_still_raise(folder):
    out = run(
        folder,
        """
        mh, _ = lab.load_student_files()
        with lab.experiment("the heatmaps"):
            undefined_name
        """,
    )
    assert out.strip().endswith("NameError: name 'undefined_name' is not defined"), out
    assert "Skipped" not in out and "During handling" not in out


def test_difference_heatmaps_have_a_colour_scale_that_shows_how_large_a_difference_is(folder):
    """1e-17 (float64 rounding) must not look like a real error: one fixed logarithmic scale
    for every difference, shown by a colour bar, whatever a figure's largest difference is."""
    out = run(
        folder,
        """
        import numpy as np
        rounding = np.array([[[0.0, 1e-17], [-1e-17, 0.0]]])
        wrong = np.array([[[0.0, 1e-17], [-0.1, 0.0]]])
        for fig in (
            lab.plot_differences({"rounding": rounding}, "t"),
            lab.plot_differences({"wrong": wrong}, "t"),
            lab.plot_versus(np.full((1, 2, 2), 0.5), np.full((1, 2, 2), 0.5) - rounding[0], "t"),
        ):
            bars = [ax for ax in fig.axes if not ax.images and ax.get_ylabel()]
            diffs = [ax.images[0] for ax in fig.axes if ax.images and "-" in ax.get_title()]
            print("bars", len(bars), "labels", [b.get_ylabel() for b in bars])
            for image in diffs:
                rgba = image.to_rgba(image.get_array())
                scaled = image.norm(np.abs(image.get_array()).filled(0))
                off = [round(float(scaled[0, 1]), 2), round(float(scaled[1, 0]), 2)]
                print("cells", off, "zero is white", bool((rgba[0, 0] == 1).all()))
        """,
    )
    lines = out.splitlines()
    bars = [line for line in lines if line.startswith("bars")]
    assert len(bars) == 3 and all("|yours - torch|" in b for b in bars), out
    assert "bars 2" in bars[2] and "attention weight" in bars[2]  # plot_versus: both scales
    cells = [line for line in lines if line.startswith("cells")]
    # Off the diagonal: 1e-17 at the bottom of the scale in every figure, 0.1 near its top.
    assert cells[0].startswith("cells [0.06, 0.06]") and cells[1].startswith("cells [0.06, 0.94]")
    assert all(c.endswith("zero is white True") for c in cells), out
