"""What grading and mha-check say when a file imports what grading lacks, and words that are
true: a library is named once, where it is imported, by both; a file that does not load costs
one line per question, and what depends on it only; warnings are not called printing; a call
that raised says on what shapes of input."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
MULTIHEAD = [q for q, f in CODE_QUESTIONS.items() if f == "multihead.py"]


def submission(tmp_path: Path, numpy_line: str = "", crosscheck_extra: str = "") -> Path:
    """The reference, with its `import numpy as np` line replaced by ``numpy_line`` (when
    given) and lines added at the end of crosscheck.py."""
    folder = tmp_path / "student"
    folder.mkdir()
    for name in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / name, folder / name)
    text = (folder / "multihead.py").read_text()
    if numpy_line:
        text = text.replace("import numpy as np\n", numpy_line, 1)
    (folder / "multihead.py").write_text(text)
    with open(folder / "crosscheck.py", "a") as f:
        f.write(crosscheck_extra)
    return folder


def check(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mha_check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def engine():
    with Engine(Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=60.0)) as e:
        yield e


# `rich` is installed here (mha-check uses it) and in the grading environment: only the rule
# keeps a student file from importing it.
NOT_ALLOWED = "import numpy as np\nimport rich\n"


def test_a_library_the_exercise_does_not_allow_is_named_by_mha_check_and_by_the_grade(
    engine, tmp_path
):
    folder = submission(tmp_path, NOT_ALLOWED)
    said = check(folder)
    assert "multihead.py imports rich, which this exercise does not allow" in said
    assert said.count("imports rich") == 1  # once, where it is imported
    grade = engine.grade(load_submission(folder))
    assert grade.status == "import-error"
    notes = "\n".join(grade.notes)
    assert "multihead.py imports rich, which this exercise does not allow" in notes
    for q in MULTIHEAD:  # one line per question, no case lines repeating the import error
        lines = [r for r in grade.results if r.question == q]
        assert len(lines) == 1 and lines[0].name == f"{q}: not graded" and lines[0].score == 0
        assert "your split_heads" not in lines[0].output  # no callee blamed
    # crosscheck.py still loads: what does not call multihead.py is graded and checked alike
    assert grade.scores()["weights_from_torch"] == POINTS["weights_from_torch"]
    assert "weights_from_torch    passed" in said
    (cross,) = [r for r in grade.results if r.question == "cross_check"]
    assert "cross_check calls multi_head_attention from multihead.py" in cross.output
    assert "cross_check calls multi_head_attention from multihead.py" in said


def test_a_helper_file_of_the_students_own_fails_locally_as_in_grading(engine, tmp_path):
    folder = submission(tmp_path, crosscheck_extra="\nfrom helpers import tidy  # noqa\n")
    (folder / "helpers.py").write_text("def tidy(x):\n    return x\n")
    said = check(folder)
    assert "crosscheck.py imports helpers, which this exercise does not allow" in said
    grade = engine.grade(load_submission(folder))  # the folder's helpers.py is not handed in
    assert grade.scores()["weights_from_torch"] == 0
    assert grade.scores()["softmax"] == POINTS["softmax"]


def test_a_typo_in_an_import_keeps_pythons_own_words(tmp_path):
    said = check(submission(tmp_path, "import numpyy as np\n"))
    assert "No module named 'numpyy'" in said and "does not allow" not in said


UNSTABLE = """

def softmax(x, axis=-1):  # no shift by the maximum: exp overflows for large scores
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
"""


def test_numpys_warnings_are_not_called_printed_output(engine, tmp_path):
    folder = submission(tmp_path)
    with open(folder / "multihead.py", "a") as f:
        f.write(UNSTABLE)  # defined last: the softmax that counts
    grade = engine.grade(load_submission(folder))
    notes = "\n".join(grade.notes)
    assert "NumPy or Python warned while your code ran the hidden tests" in notes
    assert "printed output" not in notes


def test_a_call_that_raised_says_on_what_shapes_of_input(engine, tmp_path):
    folder = submission(tmp_path)
    with open(folder / "multihead.py", "a") as f:
        f.write("\n\ndef merge_heads(H):\n    raise RuntimeError('no')\n")
    grade = engine.grade(load_submission(folder))
    outputs = [r.output for r in grade.results if r.question == "merge_heads" and not r.passed]
    assert outputs and all("on an array of shape (" in out for out in outputs)
