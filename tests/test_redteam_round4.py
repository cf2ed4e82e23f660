"""Red team, round four: routes a motivated student could hand in that the first three rounds'
suites do not take, each built as a submission (the reference files plus the trick) and graded
or checked for real.

- The NumPy wall taken down from inside: the import finder that refuses other libraries is a
  Python object in the student's own process, so the student's code can take it off
  ``sys.meta_path`` (and put back Python's own ``__import__``) and import another numerical
  library (here mpmath, which the grader's own environment installs) in a NumPy question.
- cross_check measuring torch against torch: the module compared with a copy of itself whose
  zero attention key is switched off gives the real difference of the zero-key module from the
  plain pipeline, so the honesty anchor is met without any NumPy pipeline at all.
- mha-check passing what grading fails: a top-level torch call in multihead.py (grading's NumPy
  questions cannot load the file; mha-check loads it outside its NumPy rule), a file saved in
  Latin-1 with a coding declaration (Python runs it; grading reads UTF-8 only), and a data file
  read beside multihead.py (mha-check runs the student's folder, grading receives three files).
- A copy past the similarity report: the reference file with a dead statement after every
  statement (every k-gram broken), beside an exact copy of its crosscheck.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mha_check.questions import STUDENT_FILES
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outputs import similarity
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
ROUND4 = ROOT / "tests" / "hostile" / "round4"
LIMITS = Limits(call_timeout=10.0, import_timeout=10.0, submission_timeout=60.0)
NUMPY_QUESTIONS = (
    "softmax",
    "split_heads",
    "merge_heads",
    "attention",
    "multi_head_attention",
    "distinct_head_pairs",
)


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


def submission(tmp_path: Path, name: str = "sub", **replace: str) -> Path:
    """The reference files, each named one (``multihead``...) replaced by the text given."""
    folder = tmp_path / name
    folder.mkdir()
    for file in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / file, folder / file)
    for stem, text in replace.items():
        (folder / f"{stem}.py").write_text(text)
    return folder


def reference(stem: str) -> str:
    return (ROOT / "solutions" / f"{stem}.py").read_text()


def mha_check(folder: Path) -> int:
    """mha-check's exit status on a folder (0: every question passed or answered)."""
    run = subprocess.run(
        [sys.executable, "-m", "mha_check", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run.returncode


# -- the NumPy wall, taken down from inside ---------------------------------------------------

UNWALLED = '''

def _unwalled():
    """Every finder but Python's own off sys.meta_path, Python's own __import__ back."""
    import builtins
    import importlib
    import sys

    own = ("builtins", "_frozen_importlib", "_frozen_importlib_external")
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ in own]
    builtins.__import__ = importlib.__import__
    return importlib.import_module("mpmath")


def softmax(x, axis=-1):  # another numerical library than NumPy does the exponentials
    mp = _unwalled()
    x = np.asarray(x, dtype=float)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.vectorize(lambda v: float(mp.exp(v)))(shifted) if shifted.size else shifted
    return e / np.sum(e, axis=axis, keepdims=True)
'''


def hides_files(engine: Engine) -> bool:
    layer = engine.layer
    return bool(layer.per_worker_uid and layer.name == "namespaces" or layer.landlock)


def test_a_numpy_question_that_takes_the_import_wall_down_earns_nothing(engine, tmp_path):
    if not hides_files(engine):
        pytest.skip("this layer cannot hide files: the import wall alone stands (containment.md)")
    folder = submission(tmp_path, multihead=reference("multihead") + UNWALLED)
    g = engine.grade(load_submission(folder))
    assert g.scores()["softmax"] == 0
    assert g.scores()["split_heads"] == POINTS["split_heads"]  # only the function that does it


# -- cross_check: torch against torch --------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="torch's module against a copy of itself with its zero key switched off meets the "
    "zero-key anchor: cross_check earns its points with no NumPy pipeline at all (a contract "
    "decision: what counts as 'the student's pipeline' when crosscheck.py may use torch)",
)
def test_torch_against_a_copy_of_itself_without_its_zero_key_earns_nothing(engine, tmp_path):
    folder = submission(
        tmp_path,
        multihead=(ROOT / "exercises" / "multihead.py").read_text(),  # not attempted at all
        crosscheck=(ROUND4 / "torch_twin_crosscheck.py").read_text(),
    )
    g = engine.grade(load_submission(folder))
    assert g.scores()["multi_head_attention"] == 0
    assert g.scores()["cross_check"] == 0


# -- mha-check passing what grading fails ----------------------------------------------------

TOP_LEVEL_SEED = "import numpy as np\nimport torch\n\ntorch.manual_seed(0)  # for my experiments\n"
DATA_BESIDE = (
    "import numpy as np\nimport os\n\n"
    "_SCALE = float(np.load(os.path.join(os.path.dirname(__file__), 'scale.npy')))\n"
)


def _not_full(engine: Engine, folder: Path) -> bool:
    g = engine.grade(load_submission(folder))
    return any(g.scores()[q] < POINTS[q] for q in NUMPY_QUESTIONS)


def test_a_top_level_torch_call_fails_the_local_check_as_it_fails_grading(engine, tmp_path):
    text = reference("multihead").replace("import numpy as np\n", TOP_LEVEL_SEED, 1)
    folder = submission(tmp_path, multihead=text)
    assert _not_full(engine, folder)
    assert mha_check(folder) != 0


# torch imported for parameter_counts and named at the top level without being called (a type
# hint, a base class): it loads where the NumPy questions run, in grading and in mha-check alike
TORCH_NAMED = (
    "import numpy as np\nimport torch\nfrom torch import nn\n\n"
    "Tensor = torch.Tensor\n\n\nclass _Unused(nn.Module):\n    pass\n"
)


def test_torch_named_but_not_called_at_the_top_passes_the_local_check_and_grading(engine, tmp_path):
    text = reference("multihead").replace("import numpy as np\n", TORCH_NAMED, 1)
    folder = submission(tmp_path, multihead=text)
    assert not _not_full(engine, folder)
    assert mha_check(folder) == 0


def test_a_latin1_file_fails_the_local_check_as_it_fails_grading(engine, tmp_path):
    folder = submission(tmp_path)
    text = "# -*- coding: latin-1 -*-\n# Auteur : H\u00e9l\u00e8ne\n" + reference("multihead")
    (folder / "multihead.py").write_bytes(text.encode("latin-1"))
    assert _not_full(engine, folder)
    assert mha_check(folder) != 0


def test_a_data_file_beside_the_code_fails_the_local_check_as_it_fails_grading(engine, tmp_path):
    text = reference("multihead").replace("import numpy as np\n", DATA_BESIDE, 1)
    folder = submission(tmp_path, multihead=text)
    np.save(folder / "scale.npy", np.array(1.0))
    assert _not_full(engine, folder)
    assert mha_check(folder) != 0


# -- a copy past the similarity report --------------------------------------------------------


def code_of(folder: Path) -> dict[str, str]:
    return {n: (folder / n).read_text() for n in ("multihead.py", "crosscheck.py")}


@pytest.mark.xfail(
    strict=True,
    reason="a dead statement after every statement breaks every k-gram of a copy: dead code "
    "is reduced like live code",
)
def test_a_copy_padded_with_dead_statements_is_listed(tmp_path):
    original = submission(tmp_path, "alice")
    padded = submission(
        tmp_path, "bob", multihead=(ROUND4 / "padded_copy_multihead.py").read_text()
    )
    stubs = tmp_path / "carol"
    stubs.mkdir()
    for name in ("multihead.py", "crosscheck.py"):
        shutil.copy(ROOT / "exercises" / name, stubs / name)
    report = similarity.compare({s.name: code_of(s) for s in (original, padded, stubs)})
    listed = {(p.a, p.b) for p in report.pairs}
    listed |= {tuple(g.students) for g in report.groups}
    assert ("alice", "bob") in listed
