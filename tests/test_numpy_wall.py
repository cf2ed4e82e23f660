"""The NumPy questions' wall (mha_grader/sandbox/worker/withheld.py), attacked as a student would.

The NumPy questions run in workers forked before torch was imported, where only NumPy and the
standard library can be imported and torch's names refuse to be used. Each route below reaches
torch (or another library) in the worker of the torch questions, which proves the route works,
and must fail in a NumPy question's worker. Where the layer hides torch's files (namespaces as
root, Landlock), the routes through the files fail too; elsewhere the zygote says they are
readable, and the import wall alone stands (docs/containment.md). tests/test_layers.py runs this
file again in every layer.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from mha_check.questions import STUDENT_FILES
from mha_grader.errors import StudentCodeError, StudentRaised
from mha_grader.grading.engine import Engine
from mha_grader.grading.replies import NUMPY_ONLY
from mha_grader.grading.submission import load_submission
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=20.0, import_timeout=10.0, submission_timeout=120.0)

ROUTES = """
import ctypes
import gc
import importlib
import importlib.machinery
import importlib.util
import os
import sys

import torch  # multihead.py may import torch, for parameter_counts
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):  # a class on a withheld name still defines, so the file loads
    pass


DTYPE = torch.float64  # so does a name kept at the top level


def _sum(t):
    return float(t.ones(2).sum())


def by_name():
    return _sum(torch)


def by_functional():
    return float(F.softmax(torch.zeros(2), dim=0).sum())


def by_modules():
    return _sum(sys.modules["torch"])


def by_gc():
    found = [o for o in gc.get_objects() if isinstance(o, type(sys)) and o.__name__ == "torch"]
    return _sum(found[0])


def by_import_module():
    return _sum(importlib.import_module("torch"))


def by_hidden_import():
    return _sum(__import__("to" + "rch"))


def by_disabled_modes():
    with torch._C.DisableTorchFunction():
        return _sum(torch)


def torch_folder():
    for entry in sys.path:
        folder = os.path.join(entry, "torch")
        if os.path.isdir(folder):
            return folder
    return ""


def by_file():
    path = os.path.join(torch_folder(), "__init__.py")
    with open(path, "rb") as f:
        return len(f.read(100))


def by_extension():
    folder = torch_folder()
    name = next(n for n in os.listdir(folder) if n.startswith("_C.") and n.endswith(".so"))
    loader = importlib.machinery.ExtensionFileLoader("torch._C", os.path.join(folder, name))
    return type(loader.create_module(importlib.util.spec_from_loader("torch._C", loader))).__name__


def by_ctypes():
    lib = os.path.join(torch_folder(), "lib")
    name = next(n for n in os.listdir(lib) if n.startswith("libtorch_cpu"))
    return str(ctypes.CDLL(os.path.join(lib, name)))[:20]


def other_library():  # an installed library, imported under another file's name
    scope = {}
    exec(compile("import snowballstemmer as s", "elsewhere.py", "exec"), scope)
    return len(scope["s"].algorithms())


def is_tensor(x):
    return isinstance(x, torch.Tensor)


def torch_loaded():
    return [name for name in sys.modules if name.split(".")[0] == "torch" and
            hasattr(sys.modules[name], "__file__")]
"""

IMPORT_ROUTES = (
    "by_name",
    "by_functional",
    "by_modules",
    "by_gc",
    "by_import_module",
    "by_hidden_import",
    "by_disabled_modes",
    "other_library",
)
FILE_ROUTES = ("by_file", "by_extension", "by_ctypes")


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


@pytest.fixture(scope="module")
def session(engine):
    source = (ROOT / "solutions" / "multihead.py").read_text() + ROUTES
    with engine.open_session({"multihead": source}) as s:
        yield s


def numpy_side(session, name):
    return session.numpy_session().proxy("multihead", name)


def torch_side(session, name):
    return session.proxy("multihead", name)  # not a NumPy question: the torch questions' worker


@pytest.mark.parametrize("route", IMPORT_ROUTES)
def test_a_route_to_another_library_works_beside_torch_and_fails_in_a_numpy_worker(session, route):
    assert torch_side(session, route)() > 0  # the route is real
    with pytest.raises(StudentCodeError):
        numpy_side(session, route)()


@pytest.mark.parametrize("route", FILE_ROUTES)
def test_torchs_files_are_out_of_reach_where_the_layer_hides_them(engine, session, route):
    assert torch_side(session, "by_file")()  # torch's files are there, readable beside torch
    numpy_side(session, "is_tensor")(np.ones(2))  # the NumPy zygote has said how it stands
    files = session.zygote.torch_files
    assert files in ("hidden", "readable")
    if engine.layer.per_worker_uid and engine.layer.name == "namespaces" or engine.layer.landlock:
        assert files == "hidden"  # the layers that can hide files do
    if files == "hidden":
        with pytest.raises(StudentCodeError):
            numpy_side(session, route)()


def test_a_numpy_worker_holds_no_torch_and_its_names_match_nothing(session):
    assert numpy_side(session, "torch_loaded")() == []
    assert numpy_side(session, "is_tensor")(np.ones(2)) is False
    assert torch_side(session, "torch_loaded")() != []


def test_the_torch_questions_keep_torch(session):
    counts = session.proxy("multihead", "parameter_counts")(8, [1, 2])
    assert counts == {1: 256, 2: 256}


TORCH_SOFTMAX = """

import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.from_numpy(np.asarray(x, dtype=float)), dim=axis).numpy()
"""

TOP_LEVEL_TORCH_CALL = """

import torch

torch.manual_seed(0)  # runs at import: refused where the NumPy questions run
"""


def submission(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "sub"
    folder.mkdir()
    for file in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / file, folder / file)
    with open(folder / "multihead.py", "a") as f:
        f.write(extra)
    return folder


def messages(grade, qid: str) -> str:
    return "\n".join(r.output for r in grade.results if r.question == qid)


def test_a_softmax_written_with_torch_earns_nothing_and_is_told_why(engine, tmp_path):
    g = engine.grade(load_submission(submission(tmp_path, TORCH_SOFTMAX)))
    assert g.scores()["softmax"] == 0
    assert NUMPY_ONLY in messages(g, "softmax")
    assert g.scores()["parameter_counts"] == POINTS["parameter_counts"]
    assert g.scores()["weights_from_torch"] == POINTS["weights_from_torch"]


def test_torch_called_at_import_keeps_the_numpy_questions_from_loading_only(engine, tmp_path):
    g = engine.grade(load_submission(submission(tmp_path, TOP_LEVEL_TORCH_CALL)))
    assert g.scores()["softmax"] == 0 and g.scores()["split_heads"] == 0
    assert "where the NumPy questions run" in messages(g, "split_heads")
    assert g.scores()["parameter_counts"] == POINTS["parameter_counts"]
    assert g.scores()["cross_check"] == POINTS["cross_check"]


def test_the_reference_with_torch_imported_at_the_top_loses_nothing(engine, tmp_path):
    extra = "\nimport torch\nfrom torch import nn\n\n\nclass Unused(nn.Module):\n    pass\n"
    g = engine.grade(load_submission(submission(tmp_path, extra)))
    code = [q for q in POINTS if q in g.scores() and not q.startswith(("q", "challenge"))]
    assert {q: g.scores()[q] for q in code} == {q: POINTS[q] for q in code}


def test_no_feedback_names_a_module_the_code_made_up(engine, tmp_path):
    # the channel of the last round: fake modules named after libraries, chosen by a hidden
    # value's bits, used to be named in the audit's note
    extra = """

import sys
import types


def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    for i, name in enumerate(("scipy", "jax", "tensorflow", "sklearn", "pandas")):
        if int(abs(float(x.flat[0])) * 10 ** (i + 1)) % 2:
            sys.modules[name] = types.ModuleType(name)
            getattr(sys.modules[name], "__name__")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""
    g = engine.grade(load_submission(submission(tmp_path, extra)))
    text = "\n".join(r.output for r in g.results).lower()
    assert not any(name in text for name in ("scipy", "jax", "tensorflow", "sklearn", "pandas"))
    assert g.scores()["softmax"] == POINTS["softmax"]


def test_what_a_numpy_worker_refuses_to_import_is_a_refusal_not_a_crash(session):
    with pytest.raises(StudentRaised) as e:
        numpy_side(session, "other_library")()
    assert e.value.is_a(ImportError)
