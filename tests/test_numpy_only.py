"""The NumPy questions must use NumPy (and the standard library) only: a call that reaches
torch, scipy, jax or any other library is seen in the worker (worker/audit.py), reported as
plain data, and flagged on the trusted side by points.toml's policy."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from mha_check.questions import NUMPY_QUESTIONS, STUDENT_FILES
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outcomes import Tag
from mha_grader.points import POINTS, Policy
from mha_grader.sandbox import Limits
from mha_grader.sandbox.worker import audit

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=60.0)

TORCH_SOFTMAX = """

import torch


def softmax(x, axis=-1):
    return torch.softmax(torch.from_numpy(np.asarray(x, dtype=float)), dim=axis).numpy()


def parameter_counts(d_model, head_counts, bias=False):  # torch is allowed here
    heads = list(head_counts)
    return {h: sum(p.numel() for p in torch.nn.MultiheadAttention(d_model, h, bias=bias)
                   .parameters()) if d_model % h == 0 else _refuse(h) for h in heads}


def _refuse(h):
    raise ValueError(f"{h} does not divide d_model")
"""

# Libraries the import rule (worker/imports.py) would refuse, reached around it (code compiled
# under another file's name): the audit is the second line, and still sees them.
OTHER_LIBRARY = """

exec(compile("import snowballstemmer", "elsewhere.py", "exec"))  # held at the top level


def merge_heads(H):
    snowballstemmer.algorithms()
    num_heads, n, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, num_heads * d_head)


def split_heads(M, num_heads, d_head):
    exec(compile("import markdown_it", "elsewhere.py", "exec"))  # imported during the call
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("bad width")
    return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)
"""


def submission(tmp_path: Path, extra: str) -> Path:
    folder = tmp_path / "sub"
    folder.mkdir()
    for file in STUDENT_FILES:
        shutil.copy(ROOT / "solutions" / file, folder / file)
    with open(folder / "multihead.py", "a") as f:
        f.write(extra)
    return folder


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


def flagged(grade) -> dict[str, str]:
    return {
        r.question: r.output
        for r in grade.results
        if Tag.BEYOND_NUMPY in r.tags and "needs-review" in r.tags
    }


def test_a_softmax_that_calls_torch_is_flagged_by_name_and_keeps_its_points(engine, tmp_path):
    g = engine.grade(load_submission(submission(tmp_path, TORCH_SOFTMAX)))
    found = flagged(g)
    # attention calls softmax: its calls reached torch too; parameter_counts may use torch
    assert set(found) == {"softmax", "attention", "multi_head_attention"}
    assert "Your softmax used torch during the grader's calls" in found["softmax"]
    assert "Your attention used torch (through your softmax)" in found["attention"]
    assert g.needs_review and g.scores()["softmax"] == POINTS["softmax"]
    assert g.scores()["parameter_counts"] == POINTS["parameter_counts"]


def test_with_the_zero_policy_the_questions_it_touched_earn_nothing(tmp_path):
    with Engine(limits=LIMITS, policy=Policy(numpy_only="zero")) as engine:
        g = engine.grade(load_submission(submission(tmp_path, TORCH_SOFTMAX)))
    assert {q for q in NUMPY_QUESTIONS if g.scores()[q] == 0} == set(flagged(g))
    assert "it earns no points here" in flagged(g)["softmax"]
    assert g.scores()["split_heads"] == POINTS["split_heads"]


def test_libraries_held_or_imported_during_a_call_are_flagged_unknown_ones_unnamed(
    engine, tmp_path
):
    g = engine.grade(load_submission(submission(tmp_path, OTHER_LIBRARY)))
    found = flagged(g)
    assert {"merge_heads", "split_heads"} <= set(found)
    assert "used another library beyond NumPy" in found["merge_heads"]
    assert "snowball" not in found["merge_heads"] and "markdown" not in found["split_heads"]


def test_the_reference_reaches_no_other_library(engine, tmp_path):
    g = engine.grade(load_submission(submission(tmp_path, "")))
    assert flagged(g) == {} and not g.needs_review


def test_the_audit_sees_torch_new_imports_and_held_libraries_in_process():
    import torch

    with audit.Watch(set()) as seen:
        np.exp(np.ones(3))
    assert seen == set()
    with audit.Watch(set()) as seen:
        torch.ones(2).exp()
    assert seen == {"torch"}
    import json  # noqa: F401  (standard library: never flagged)

    with audit.Watch({"snowballstemmer"}) as seen:
        import snowballstemmer

        snowballstemmer.algorithms()
    assert seen == {"snowballstemmer"}
    assert audit.foreign("scipy") and not audit.foreign("numpy") and not audit.foreign("json")
