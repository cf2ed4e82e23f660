"""Error carried forward through the calls that happened (grading/carry.py, calls.py):
a composite is credited for a callee's mistake only where it called that callee and is right
given right callees; a callee's mistake that cancels the composite's own is charged to both;
a callee that returns other values inside the composite than on its own (state kept between
calls) is no excuse.

In-process proxies (direct.proxy) for most cases, the real sandbox for what needs a fresh
worker; the style of each composite is one real authors use (minGPT's inline attention, a
lecture's K, Q, V naming, a loop over heads, GPT-2's layer-scoped configuration).
"""

from __future__ import annotations

import numpy as np
import pytest

from mha_check.questions import STUDENT_FILES
from mha_grader.grading import hidden
from mha_grader.grading.engine import Engine
from mha_grader.grading.submission import load_submission
from mha_grader.outcomes import Tag
from mha_grader.paths import SOLUTIONS
from mha_grader.points import POINTS
from mha_grader.sandbox import Limits
from solutions import multihead as ref
from tests.mutants.build import reference_env


def grade(qid: str, **overrides) -> list:
    return hidden.run_question(qid, reference_env(**overrides), carry_forward=True)


def score(results) -> float:
    return round(sum(r.score for r in results), 6)


def causal(scores: np.ndarray) -> np.ndarray:
    n, m = scores.shape[-2:]
    return np.where(np.tril(np.ones((n, m), dtype=bool)), scores, -np.inf)


def causal_attention(Q, K, V):
    scores = causal(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
    w = ref.softmax(scores, axis=-1)
    return w @ V, w


def test_a_composite_computing_attention_inline_is_not_credited_for_a_callee_it_never_called():
    def inline_causal_mha(X, Wq, Wk, Wv, Wo, num_heads):  # minGPT's forward, typed inline
        d = X.shape[1] // num_heads
        q, k, v = ((X @ W).reshape(len(X), num_heads, d).transpose(1, 0, 2) for W in (Wq, Wk, Wv))
        w = ref.softmax(causal(q @ k.transpose(0, 2, 1) / np.sqrt(d)), axis=-1)
        return (w @ v).transpose(1, 0, 2).reshape(len(X), -1) @ Wo, w

    results = grade(
        "multi_head_attention", attention=causal_attention, multi_head_attention=inline_causal_mha
    )
    lost = [r for r in results if not r.passed]
    assert lost, "its own causal mask must cost it"
    for r in results:
        assert not any(t.startswith(Tag.CARRIED) for t in r.tags)
        assert "attention" not in r.output.split("Diagnosis:")[0].replace(
            "multi_head_attention", ""
        )


def test_a_callee_called_only_on_inputs_where_it_is_right_takes_no_blame():
    def kt_attention(Q, K, V):  # K.T: right on one head's 2-D slices, wrong on stacked heads
        w = ref.softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, w

    def looping_mha(X, Wq, Wk, Wv, Wo, num_heads):  # one head at a time, weights averaged
        d = X.shape[1] // num_heads
        Qh, Kh, Vh = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        pairs = [kt_attention(Qh[h], Kh[h], Vh[h]) for h in range(num_heads)]
        out = ref.merge_heads(np.stack([o for o, _ in pairs]))
        return out @ Wo, np.mean([w for _, w in pairs], axis=0)

    results = grade(
        "multi_head_attention", attention=kt_attention, multi_head_attention=looping_mha
    )
    assert score(results) < POINTS["multi_head_attention"] / 2
    for r in results:
        assert not any(t.startswith(Tag.CARRIED) for t in r.tags)
        assert "fix attention first" not in r.output


def test_mistakes_that_cancel_are_charged_to_the_composite_too():
    def kq_attention(Q, K, V):  # scores as K Qᵀ: transposed
        w = ref.softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, w

    def swapped_mha(X, Wq, Wk, Wv, Wo, num_heads):  # a lecture's "K, Q, V = split(...)"
        d = X.shape[1] // num_heads
        Qh, Kh, Vh = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        out, w = kq_attention(Kh, Qh, Vh)
        return ref.merge_heads(out) @ Wo, w

    results = grade(
        "multi_head_attention", attention=kq_attention, multi_head_attention=swapped_mha
    )
    assert score(results) == 0
    assert all("cancels a mistake of multi_head_attention's own" in r.output for r in results)
    # ... and the callee pays for its own mistake in its own question
    assert score(grade("attention", attention=kq_attention)) < POINTS["attention"]


def test_a_composite_right_given_right_callees_is_carried_only_for_the_callees_it_called():
    def reversed_merge(H):
        return ref.merge_heads(H[::-1])

    def wrong_split(M, num_heads, d_head):  # wrong, but never called
        return ref.split_heads(M, num_heads, d_head)[::-1]

    results = grade("multi_head_attention", split_heads=wrong_split, merge_heads=reversed_merge)
    carried = {t for r in results for t in r.tags if t.startswith(Tag.CARRIED)}
    # the reference composite calls both: both are named, each where it was wrong
    assert carried == {Tag.CARRIED + "split_heads", Tag.CARRIED + "merge_heads"}
    assert score(results) == POINTS["multi_head_attention"]


# -- the real sandbox: a value that only comes out after the composite ran --------------------

STATEFUL = """

_layer = {"scale": 1.0}  # GPT-2's scale_attn_by_inverse_layer_idx, kept in a module global


def attention(Q, K, V):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) * _layer["scale"]
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    if X.shape[-1] % num_heads:
        raise ValueError(f"{num_heads} heads do not divide d_model = {X.shape[-1]}")
    d = X.shape[-1] // num_heads
    _layer["scale"] = 0.5  # "the layer's own scale", set during its call only
    try:
        Qh, Kh, Vh = (split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        out, w = attention(Qh, Kh, Vh)
        return merge_heads(out) @ Wo, w
    finally:
        _layer["scale"] = 1.0
"""


@pytest.fixture(scope="module")
def engine():
    with Engine(Limits(call_timeout=5.0, submission_timeout=60.0)) as e:
        yield e


def test_a_callee_that_differs_inside_the_composite_is_charged_to_the_composite(engine, tmp_path):
    folder = tmp_path / "gpt2_layer_state"
    folder.mkdir()
    for name in STUDENT_FILES:
        text = (SOLUTIONS / name).read_text()
        (folder / name).write_text(text + (STATEFUL if name == "multihead.py" else ""))
    grade = engine.grade(load_submission(folder))
    scores = grade.scores()
    assert scores["attention"] == POINTS["attention"]  # right on its own, graded on its own
    assert scores["multi_head_attention"] < POINTS["multi_head_attention"] / 2
    mha = [r for r in grade.results if r.question == "multi_head_attention" and not r.passed]
    assert mha and not any(t.startswith(Tag.CARRIED) for r in mha for t in r.tags)
    assert any(
        "returned other values when your multi_head_attention called it" in r.output for r in mha
    )


# -- a callee's arguments beyond its contract's (deeplearning.ai's `mask=None`) ---------------


def seq_len_attention(Q, K, V, mask=None):  # dk read off K's token axis: sqrt(m), not sqrt(d_k)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(K.shape[-2])
    if mask is not None:
        scores = scores + (1.0 - mask) * -1e9
    w = ref.softmax(scores, axis=-1)
    return w @ V, w


def test_a_callee_given_an_unused_extra_argument_is_still_carried_forward():
    def mha_passing_none(X, Wq, Wk, Wv, Wo, num_heads):
        d = X.shape[1] // num_heads
        Qh, Kh, Vh = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        out, w = seq_len_attention(Qh, Kh, Vh, None)
        return ref.merge_heads(out) @ Wo, w

    results = grade(
        "multi_head_attention", attention=seq_len_attention, multi_head_attention=mha_passing_none
    )
    assert score(results) == POINTS["multi_head_attention"]
    assert any(Tag.CARRIED + "attention" in r.tags for r in results)


def test_an_extra_argument_that_changes_the_callee_is_charged_to_the_composite():
    def masked_attention(Q, K, V, mask=None):  # right on its contract's three arguments
        scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        w = ref.softmax(scores, axis=-1)
        return w @ V, w

    def mha_passing_a_causal_mask(X, Wq, Wk, Wv, Wo, num_heads):  # picoGPT's mask, passed on
        d = X.shape[1] // num_heads
        Qh, Kh, Vh = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        mask = np.tril(np.ones((len(X), len(X)), dtype=bool))
        out, w = masked_attention(Qh, Kh, Vh, mask)
        return ref.merge_heads(out) @ Wo, w

    results = grade(
        "multi_head_attention",
        attention=masked_attention,
        multi_head_attention=mha_passing_a_causal_mask,
    )
    assert score(results) < POINTS["multi_head_attention"] / 2
    assert not any(t.startswith(Tag.CARRIED) for r in results for t in r.tags)
    lost = [r for r in results if not r.passed]
    assert any("passes it more arguments than its contract's" in r.output for r in lost)
    assert score(grade("attention", attention=masked_attention)) == POINTS["attention"]


DROPOUT = """

_rng = np.random.default_rng()


def attention(Q, K, V):  # Keras' attention dropout, left on: random on every call
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    keep = _rng.random(w.shape) >= 0.1
    return (w * keep / 0.9) @ V, w
"""


def test_a_random_callee_is_named_as_random_not_as_state_the_composite_keeps(engine, tmp_path):
    folder = tmp_path / "keras_dropout"
    folder.mkdir()
    for name in STUDENT_FILES:
        text = (SOLUTIONS / name).read_text()
        (folder / name).write_text(text + (DROPOUT if name == "multihead.py" else ""))
    grade = engine.grade(load_submission(folder))
    for qid in ("multi_head_attention", "cross_check"):
        lost = [r for r in grade.results if r.question == qid and not r.passed]
        assert lost, qid
        for r in lost:
            words = r.output.split("Diagnosis:")[0]
            assert "gives other values each time it is called" in words, (qid, words)
            assert "keeps between calls" not in words and "larger than the real one" not in words


def test_a_cross_check_that_fails_before_calling_the_pipeline_is_charged_alone():
    def last_head_mha(X, Wq, Wk, Wv, Wo, num_heads):  # a loop keeping the last head's weights
        out, w = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)
        return out, w[-1]

    def float_only_cross_check(mha, X):  # torch.from_numpy(X).float(), whatever the module's dtype
        import torch

        x = torch.from_numpy(np.asarray(X)).float()
        x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
        with torch.no_grad():
            mha(x, x, x, need_weights=True, average_attn_weights=False)
        raise AssertionError("not reached for a float64 module")

    results = grade(
        "cross_check", cross_check=float_only_cross_check, multi_head_attention=last_head_mha
    )
    lost = [r for r in results if not r.passed]
    assert lost
    for r in lost:
        words = r.output.split("Diagnosis:")[0]
        assert "could not be checked" not in words and "multi_head_attention" not in words, words


def test_the_in_process_proxy_sees_the_calls_of_a_decorated_composite_as_the_worker_does():
    """A composite behind a decorator of another module (llama's @torch.inference_mode() on
    cross_check) calls its callees through its own module's names, which the worker watches:
    direct.proxy, which the tests' diagnosis runs on, must see those calls too."""
    import types

    from mha_grader.grading import direct

    decorators = types.ModuleType("decorators")
    exec(
        "import functools\n"
        "def inference_mode(f):\n"
        "    @functools.wraps(f)\n"
        "    def inner(*args, **kwargs):\n"
        "        return f(*args, **kwargs)\n"
        "    return inner\n",
        decorators.__dict__,
    )
    student = types.ModuleType("multihead")
    student.__dict__.update(np=np, inference_mode=decorators.inference_mode)
    exec(
        "def softmax(x, axis=-1):\n"
        "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
        "    return e / e.sum(axis=axis, keepdims=True)\n"
        "@inference_mode\n"
        "def attention(Q, K, V):\n"
        "    w = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)\n"
        "    return w @ V, w\n",
        student.__dict__,
    )
    env = direct.bind({n: direct.proxy(getattr(student, n)) for n in ("softmax", "attention")})
    r = np.random.default_rng(0)
    Q, K, V = (r.standard_normal((3, 4)) for _ in range(3))
    observed = env["attention"].observe((Q, K, V), {}, ("softmax",))
    assert [c.name for c in observed.calls] == ["softmax"]


RAISING_ADAPTER = """

_reference_adapter = weights_from_torch


def weights_from_torch(mha):  # the bias check the wrong way round: raises for every module
    if mha.in_proj_bias is None:
        raise ValueError("only modules with biases are supported")
    return _reference_adapter(mha)
"""


def test_in_the_sandbox_cross_check_keeps_its_points_past_an_adapter_that_raises(engine, tmp_path):
    """The adapter's mistake charged once (contract §7): cross_check, right given a right
    adapter, is carried past it; the module it hands the adapter crosses to the trusted side
    only as a module seen, never rebuilt there."""
    folder = tmp_path / "bias_check_inverted"
    folder.mkdir()
    for name in STUDENT_FILES:
        text = (SOLUTIONS / name).read_text()
        (folder / name).write_text(text + (RAISING_ADAPTER if name == "crosscheck.py" else ""))
    grade = engine.grade(load_submission(folder))
    assert grade.status == "ok"
    scores = grade.scores()
    assert scores["weights_from_torch"] < POINTS["weights_from_torch"] / 2
    assert scores["cross_check"] == POINTS["cross_check"]
    cc = [r for r in grade.results if r.question == "cross_check"]
    assert all(Tag.CARRIED + "weights_from_torch" in r.tags for r in cc)
