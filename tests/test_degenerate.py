"""Nothing for nothing: a function that does no work scores exactly 0 on its question.

For each of the nine code questions, a family of degenerate implementations (raise each builtin
exception type, return None, an empty list, a string, zeros, ones or another constant of the
right shape, the input unchanged, all the inputs, what the previous call was given, and for
cross_check constant reports, torch compared with itself and the previous call's report
replayed) is graded through the real engine (sandboxed worker, hidden tests, diagnosis) with the
rest of the submission the untouched stubs, then the reference solutions. Every one scores 0.
"""

from __future__ import annotations

import builtins
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mha_check.questions import CODE_QUESTIONS
from mha_grader.grading.engine import Engine
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits

ROOT = Path(__file__).resolve().parent.parent
LIMITS = Limits(call_timeout=5.0, import_timeout=5.0, submission_timeout=30.0)
EXCEPTIONS = sorted(
    name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
)

# Shared by every degenerate: build any builtin exception, and remember the last call's inputs.
PRELUDE = """
import builtins as _builtins
import numpy as _np

_last = []


def _exception(name):
    cls = getattr(_builtins, name)
    for args in (("degenerate",), (), ("degenerate", [ValueError()]),
                 ("utf-8", b"x", 0, 1, "degenerate")):
        try:
            return cls(*args)
        except Exception:
            pass
    return cls.__new__(cls)


def _previous(args):
    _last.append(args)
    return _last[-2] if len(_last) > 1 else args
"""

# What a result "of the right shape" is, for each question, from its arguments.
SHAPED = {
    "softmax": "_np.full(_np.shape(a[0]), {c})",
    "split_heads": "_np.full((a[1], a[0].shape[0], a[2]), {c})",
    "merge_heads": "_np.full((a[0].shape[1], a[0].shape[0] * a[0].shape[2]), {c})",
    "attention": (
        "(_np.full(a[0].shape[:-1] + a[2].shape[-1:], {c}),"
        " _np.full(a[0].shape[:-1] + a[1].shape[-2:-1], {c}))"
    ),
    "multi_head_attention": (
        "(_np.full(a[0].shape, {c}), _np.full((a[5], a[0].shape[0], a[0].shape[0]), {c}))"
    ),
    "distinct_head_pairs": "[(i, j) for i in range(len(a[0])) for j in range(i + 1, len(a[0]))]",
    "parameter_counts": "{{h: int({c}) for h in a[1]}}",
    "weights_from_torch": "tuple(_np.full((a[0].embed_dim,) * 2, {c}) for _ in range(4))",
    "cross_check": (
        "{{'output_max_abs_diff': {c}, 'weights_max_abs_diff': {c}, 'match': {c} == 0.0}}"
    ),
}

# cross_check's own degenerates: reports that measure nothing, or torch against itself.
TORCH_RUN = """
    import torch as _torch
    mha, X = a
    x = _torch.as_tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with _torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
"""
CROSS_CHECK = {
    "constant report, match=True": "return {'output_max_abs_diff': 1e-17, "
    "'weights_max_abs_diff': 1e-17, 'match': True}",
    "constant report, match=False": "return {'output_max_abs_diff': 0.5, "
    "'weights_max_abs_diff': 0.5, 'match': False}",
    "torch compared with itself": TORCH_RUN
    + "    d = float((out - out).abs().max())\n"
    + "    return {'output_max_abs_diff': d, 'weights_max_abs_diff': d, 'match': True}",
    "torch compared with itself in float64": TORCH_RUN
    + "        twin = _torch.nn.MultiheadAttention(mha.embed_dim, mha.num_heads, bias=False,\n"
    + "            batch_first=mha.batch_first, add_zero_attn=mha.add_zero_attn,\n"
    + "            dtype=_torch.float64)\n"
    + "        twin.load_state_dict({k: v.double() for k, v in mha.state_dict().items()})\n"
    + "        out2, w2 = twin(x.double(), x.double(), x.double(), need_weights=True,\n"
    + "            average_attn_weights=False)\n"
    + "    d = float((out.double() - out2).abs().max())\n"
    + "    dw = float((w.double() - w2).abs().max())\n"
    + "    return {'output_max_abs_diff': d, 'weights_max_abs_diff': dw, 'match': True}",
}


def degenerates(qid: str) -> dict[str, str]:
    """Name -> body of a degenerate `def <qid>(*a, **k)`."""
    bodies = {f"raises {name}": f"raise _exception({name!r})" for name in EXCEPTIONS}
    bodies |= {
        "returns None": "return None",
        "returns an empty list": "return []",
        "returns a string": "return 'degenerate'",
        "returns zeros of the right shape": "return " + SHAPED[qid].format(c="0.0"),
        "returns ones of the right shape": "return " + SHAPED[qid].format(c="1.0"),
        "returns a constant of the right shape": "return " + SHAPED[qid].format(c="0.25"),
        "returns its first input unchanged": "return a[0]",
        "returns all its inputs": "return a",
        "returns what the previous call was given": "return _previous(a)[0]",
    }
    if qid == "cross_check":
        bodies |= CROSS_CHECK
        # The previous call's real report, replayed (needs the reference pipeline beside it).
        bodies["replays the previous call's report"] = (
            "global _report\n"
            "    from solutions_copy import cross_check as real\n"
            "    try:\n"
            "        now = real(*a)\n"
            "    except Exception:\n"
            "        now = None\n"
            "    before = globals().get('_report')\n"
            "    _report = now\n"
            "    return before"
        )
    return bodies


def files_for(qid: str, body: str, rest: str) -> dict[str, str]:
    """multihead.py and crosscheck.py: ``rest`` ("stubs" or "reference") with ``qid`` replaced."""
    base = ROOT / ("exercises" if rest == "stubs" else "solutions")
    files = {m: (base / f"{m}.py").read_text() for m in ("multihead", "crosscheck")}
    target = CODE_QUESTIONS[qid].removesuffix(".py")
    if "solutions_copy" in body:
        # The reference cross_check under other names, to compute the report it replays.
        reference = (ROOT / "solutions" / "crosscheck.py").read_text()
        reference = reference.replace("from __future__ import annotations", "")
        for name in ("cross_check", "weights_from_torch"):
            reference = reference.replace(f"{name}(", f"_reference_{name}(")
        files[target] += "\n" + reference
        body = body.replace("from solutions_copy import cross_check as real", "pass")
        body = body.replace("real(*a)", "_reference_cross_check(*a)")
    files[target] += f"\n{PRELUDE}\n\ndef {qid}(*a, **k):\n    {body}\n"
    return files


@pytest.fixture(scope="module")
def engine():
    with Engine(limits=LIMITS) as e:
        yield e


def question_score(engine: Engine, qid: str, files: dict[str, str]) -> float:
    """The points of ``qid`` as the engine grades them (hidden tests and diagnosis)."""
    with engine.open_session(files) as session:
        results = engine.question_results(qid, session.env(), session)
    return sum(r.score for r in results)


def test_the_family_is_complete_and_the_reference_scores_full_marks(engine):
    assert {"ValueError", "NotImplementedError", "TypeError", "SystemExit"} <= set(EXCEPTIONS)
    assert len(EXCEPTIONS) > 60
    reference = {
        m: (ROOT / "solutions" / f"{m}.py").read_text() for m in ("multihead", "crosscheck")
    }
    for qid in CODE_QUESTIONS:
        assert question_score(engine, qid, reference) == pytest.approx(POINTS[qid]), qid


@pytest.mark.parametrize("rest", ["stubs", "reference"])
@pytest.mark.parametrize("qid", list(CODE_QUESTIONS))
def test_every_degenerate_implementation_scores_zero(engine, qid, rest):
    family = degenerates(qid)

    def score(item):
        name, body = item
        return name, question_score(engine, qid, files_for(qid, body, rest))

    with ThreadPoolExecutor(4) as pool:
        scores = dict(pool.map(score, family.items()))
    assert len(scores) == len(family)
    earned = {name: s for name, s in scores.items() if s != 0}
    assert earned == {}, f"{qid} with the rest {rest}: points for doing nothing"


INDEPENDENT = sorted((ROOT / "tests" / "data" / "independent").iterdir())


@pytest.mark.parametrize("folder", INDEPENDENT, ids=[p.name for p in INDEPENDENT])
def test_independently_written_correct_solutions_keep_every_point(engine, folder):
    """The other side of the audit: nothing honest is lost (cross_check's exact report among
    them), on solutions written apart from the reference."""
    files = {m: (folder / f"{m}.py").read_text() for m in ("multihead", "crosscheck")}
    with engine.open_session(files) as session:
        env = session.env()
        scores = {
            q: sum(r.score for r in engine.question_results(q, env, session))
            for q in CODE_QUESTIONS
        }
    assert scores == pytest.approx({q: POINTS[q] for q in CODE_QUESTIONS})
