"""Red team: whole submissions built to earn points without doing the work.

The degenerate audit (test_degenerate.py) replaces one function at a time; these attacks
coordinate several functions of one submission through the worker's memory, as the red team
did: a cross_check whose numbers come from torch alone while the pipeline it should check
replays torch's output (stashed by cross_check or computed from a stashed module), and
submissions whose every function raises ValueError or returns zeros. Every one scores 0 on the
code questions it does not really answer, through the real engine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS, STUDENT_FILES
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=60.0)

TORCH = '''
import numpy as _np
import torch as _torch

_stash = {}


def _remember(X, out, w):
    pass


def _run(mha, X, dtype=None):
    """torch's own (out, per-head weights) for tokens X, in the module's layout."""
    dtype = dtype or mha.in_proj_weight.dtype
    x = _torch.as_tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    module = mha if dtype == mha.in_proj_weight.dtype else _double(mha)
    with _torch.no_grad():
        out, w = module(x, x, x, need_weights=True, average_attn_weights=False)
    out = out[0] if mha.batch_first else out[:, 0]
    return out.double().numpy(), w[0].double().numpy()


def _double(mha):
    twin = _torch.nn.MultiheadAttention(
        mha.embed_dim, mha.num_heads, bias=False, batch_first=mha.batch_first,
        add_zero_attn=mha.add_zero_attn, dtype=_torch.float64,
    )
    twin.load_state_dict({k: v.double() for k, v in mha.state_dict().items()})
    return twin
'''

# cross_check measures torch against torch in float64 (rounding-level differences, as an
# honest report of a correct pipeline has) and refuses modules that differ.
SELF_CHECK = """

def cross_check(mha, X):
    if mha.add_zero_attn:
        raise ValueError("this module adds a zero attention key")
    out, w = _run(mha, X)
    _remember(X, out, w)
    out64, w64 = _run(mha, X, _torch.float64)
    d_out, d_w = float(_np.abs(out - out64).max()), float(_np.abs(w - w64).max())
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": True}
"""
# ... while the pipeline it should check replays torch's output: stashed by cross_check, or
# computed from the module that weights_from_torch stashed.
REPLAYING_PIPELINE = {
    "multihead.py": """

def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    key = _np.asarray(X).tobytes()
    if key in _stash:
        return _stash[key]
    mha = _stash.get("module")
    if mha is None:
        raise NotImplementedError
    return _run(mha, X)
""",
    "crosscheck.py": """

def _remember(X, out, w):
    import multihead
    multihead._stash[_np.asarray(X).tobytes()] = (out, w)


def weights_from_torch(mha):
    import multihead
    multihead._stash["module"] = mha
    return tuple(_np.eye(mha.embed_dim) for _ in range(4))
""",
}


def submission(tmp_path: Path, name: str, rest: str, extra: dict[str, str]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    base = ROOT / ("exercises" if rest == "stubs" else "solutions")
    for file in STUDENT_FILES:
        shutil.copy(base / file, folder / file)
    for file, text in extra.items():
        with open(folder / file, "a") as f:
            f.write(text)
    return folder


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


@pytest.mark.parametrize("rest", ["stubs", "reference"])
def test_a_cross_check_of_torch_against_itself_with_a_replaying_pipeline_earns_nothing(
    engine, tmp_path, rest
):
    extra = {"crosscheck.py": TORCH + SELF_CHECK}
    if rest == "stubs":  # and the pipeline replays torch
        extra["multihead.py"] = TORCH + REPLAYING_PIPELINE["multihead.py"]
        extra["crosscheck.py"] += REPLAYING_PIPELINE["crosscheck.py"]
    g = engine.grade(load_submission(submission(tmp_path, "replay", rest, extra)))
    assert g.scores()["cross_check"] == 0
    if rest == "stubs":
        assert g.scores()["multi_head_attention"] == 0


@pytest.mark.parametrize(
    "body",
    [
        "raise ValueError('no')",
        "return __import__('numpy').zeros((2, 2))",
        "return {'output_max_abs_diff': 0.0, 'weights_max_abs_diff': 0.0, 'match': True}",
    ],
    ids=["every function raises ValueError", "zeros", "a constant report"],
)
def test_a_submission_whose_every_function_does_nothing_earns_no_code_point(engine, tmp_path, body):
    extra = {
        file: "".join(
            f"\n\ndef {q}(*a, **k):\n    {body}\n" for q, f in CODE_QUESTIONS.items() if f == file
        )
        for file in ("multihead.py", "crosscheck.py")
    }
    g = engine.grade(load_submission(submission(tmp_path, "nothing", "stubs", extra)))
    assert sum(g.scores()[q] for q in CODE_QUESTIONS) == 0
