"""Public checks for cross_check(mha, X). The hidden tests use other modules and inputs.

cross_check runs your own weights_from_torch and multi_head_attention (or your own pipeline):
while one of those fails its own checks, mha-check says cross_check is waiting on it.
"""

import contextlib
import copy
import sys

import numpy as np
import torch
from otter.test_files import test_case

name = "cross_check"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


KEYS = ("output_max_abs_diff", "weights_max_abs_diff", "match")


class _OffOutput(torch.nn.MultiheadAttention):
    """A module whose output is shifted by 0.5: a cross-check must notice."""

    def forward(self, *args, **kwargs):
        out, weights = super().forward(*args, **kwargs)
        return out + 0.5, weights


class _OffWeights(torch.nn.MultiheadAttention):
    """A module whose attention weights come back 0.1 too large: a cross-check must notice."""

    def forward(self, *args, **kwargs):
        out, weights = super().forward(*args, **kwargs)
        return out, None if weights is None else weights + 0.1


class _SlightlyOffOutput(torch.nn.MultiheadAttention):
    """A module whose output is 0.5% too large: far above float64 rounding, below 1e-2."""

    def forward(self, *args, **kwargs):
        out, weights = super().forward(*args, **kwargs)
        return out * 1.005, weights


def _module(cls=torch.nn.MultiheadAttention, dtype=torch.float64, batch_first=False, seed=0):
    torch.manual_seed(seed)
    return cls(4, 2, bias=False, dtype=dtype, batch_first=batch_first)


def _input(seed=0, n=3):
    return np.random.default_rng(seed).normal(size=(n, 4))


def _report(cross_check, mha, X, what):
    result = cross_check(mha, X)
    assert isinstance(result, dict), (
        f"cross_check must return a dict; for {what} it returned a {type(result).__name__}"
    )
    missing = [k for k in KEYS if k not in result]
    assert not missing, f"the dict must have the keys {list(KEYS)}; for {what} {missing} missing"
    for k in KEYS[:2]:
        assert isinstance(result[k], float | np.floating), (
            f"{k} must be a float; for {what} it is a {type(result[k]).__name__}"
        )
    assert isinstance(result["match"], bool | np.bool_), (
        f"match must be a bool; for {what} it is a {type(result['match']).__name__}"
    )
    return result


def _torch_pair(mha, X, batch_first, average):
    """torch's own (out, weights) for X (n, d_model) laid out as batch_first says."""
    x = torch.as_tensor(X, dtype=next(mha.parameters()).dtype)
    x = x.unsqueeze(0) if batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=average)
    return out.squeeze(0 if batch_first else 1).double().numpy(), w[0].double().numpy()


def _near(a, b):
    return bool(np.isclose(a, b, rtol=1e-3, atol=1e-6))


def _why_no_match(result, mha, X):
    """A hint only when its diagnosis fits the differences reported (computed with torch alone)."""
    out_diff, w_diff = result["output_max_abs_diff"], result["weights_max_abs_diff"]
    if out_diff < 1e-4 and w_diff < 1e-4:
        return " Both differences are tiny: is the tolerance too strict for the module's dtype?"
    out, per_head = _torch_pair(mha, X, mha.batch_first, average=False)
    if out_diff < 1e-4 and _near(w_diff, np.abs(per_head - per_head.mean(axis=0)).max()):
        return (
            " The outputs agree but the weights differ by as much as torch's head-averaged "
            "weights do: compare per-head weights, shape (num_heads, n, n): call the module "
            "with average_attn_weights=False."
        )
    swapped, _ = _torch_pair(mha, X, not mha.batch_first, average=False)
    if _near(out_diff, np.abs(out - swapped.reshape(out.shape)).max()):
        return (
            " The output differs as much as torch's does when fed the other layout: a "
            "batch_first=False module expects (n, 1, d_model), a batch_first=True one "
            "(1, n, d_model)."
        )
    return ""


@test_case()
@kinds("float64, batch_first=False", "float64, batch_first=True")
def test_float64_module_matches(cross_check):
    for batch_first in (False, True):
        what = f"a float64 module with batch_first={batch_first}"
        mha, X = _module(batch_first=batch_first), _input()
        result = _report(cross_check, mha, X, what)
        # Rounding only: about 1e-12 computing in float64, about 1e-7 in float32 (both right).
        out_diff, w_diff = result["output_max_abs_diff"], result["weights_max_abs_diff"]
        assert out_diff < 1e-5 and w_diff < 1e-5, (
            f"for {what} your implementation should agree with torch up to rounding; got "
            f"{result}.{_why_no_match(result, mha, X)}"
        )
        assert result["match"] or max(out_diff, w_diff) > 1e-10, (
            f"for {what} the differences are at float64 rounding, so match should be True; "
            f"got {result}. Is the tolerance too strict for the module's dtype?"
        )


@test_case()
@kinds("float32, batch_first=True", "float32, batch_first=False")
def test_float32_module_matches(cross_check):
    for batch_first in (False, True):
        what = f"a float32 module with batch_first={batch_first}"
        mha, X = _module(dtype=torch.float32, batch_first=batch_first, seed=1), _input(1, n=5)
        result = _report(cross_check, mha, X, what)
        assert result["match"] and result["output_max_abs_diff"] < 1e-4, (
            f"for {what} the two agree to about 1e-6 (float32 keeps about 7 digits), so match "
            f"should be True; got {result}.{_why_no_match(result, mha, X)}"
        )


@contextlib.contextmanager
def _right_multi_head_attention(cross_check, yours, mha, X):
    """Wherever cross_check finds your multi_head_attention (its module, or multihead), a right
    one for this module and X: torch's own per-head result in float64 (a float32 module's
    computed by a float64 copy of it, as a NumPy pipeline computes), whatever weights it is
    given."""
    exact = copy.deepcopy(mha).double()
    out, weights = _torch_pair(exact, X, mha.batch_first, average=False)

    def right(*args, **kwargs):
        return out.copy(), weights.copy()

    multihead = sys.modules.get("multihead")
    spaces = [getattr(cross_check, "__globals__", {}), getattr(multihead, "__dict__", {})]
    undo = []
    for space in spaces:
        for key, value in list(space.items()):
            if value is yours or getattr(value, "__wrapped__", None) is yours:
                space[key] = right
                undo.append((space, key, value))
    try:
        yield
    finally:
        for space, key, value in reversed(undo):
            space[key] = value


@test_case()
@kinds("a right multi_head_attention in place of yours")
def test_a_right_multi_head_attention_is_reported_as_a_match(cross_check, multi_head_attention):
    # A cross_check that matches only with your own multi_head_attention hides a mistake that
    # two wrongs cancel (torch's head-averaged weights against an average of your own), or a
    # tolerance that only your own pipeline's differences show (one too strict for float32).
    for dtype, spread, bound in ((torch.float64, 1.0, 1e-5), (torch.float32, 4.0, 1e-4)):
        kind = str(dtype).removeprefix("torch.")
        what = f"a {kind} module, with a right multi_head_attention put where you call yours"
        mha, X = _module(dtype=dtype, seed=5), _input(5, n=6) * spread
        with _right_multi_head_attention(cross_check, multi_head_attention, mha, X):
            result = _report(cross_check, mha, X, what)
        out_diff, w_diff = result["output_max_abs_diff"], result["weights_max_abs_diff"]
        assert out_diff < bound and w_diff < bound and result["match"], (
            f"for {what}, the pipeline agrees with torch up to {kind} rounding, so both "
            f"differences should be at rounding level and match True; got {result}. With a "
            f"right multi_head_attention your cross_check does not report a match."
            f"{_why_no_match(result, mha, X)}"
        )


@test_case()
@kinds("float64, batch_first=False")
def test_your_own_pipeline_is_reported(cross_check, multi_head_attention, weights_from_torch):
    # cross_check measures your pipeline: where your own multi_head_attention (with your
    # weights_from_torch's weights) differs from the module, its report must say so. X's rows
    # are tokens whatever their values: one whose features are all 0 is a token like any other.
    mha = _module(seed=7)
    zero = _input(7, n=4)
    zero[1] = 0.0
    for X, what in ((_input(7), "X"), (zero, "X whose token 1 has all its features 0")):
        try:
            own = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
            out, _ = _torch_pair(mha, X, mha.batch_first, average=False)
            real = float(np.abs(np.asarray(own[0], dtype=np.float64) - out).max())
        except Exception:
            return  # your pipeline does not run here: its own checks say why
        if not real > 1e-3:
            continue  # your pipeline agrees with the module: any right report is yours
        what = f"a float64 module and {what}, which your own pipeline does not reproduce"
        result = _report(cross_check, mha, X, what)
        close = np.isclose(result["output_max_abs_diff"], real, rtol=1e-3)
        assert close and not result["match"], (
            f"for {what}, your multi_head_attention with your weights_from_torch's weights "
            f"differs from the module's output by {real:.4g}, so output_max_abs_diff should be "
            f"that and match False; got {result}. Your cross_check does not report your own "
            "pipeline against the module's plain call: it must run X through your "
            "multi_head_attention (imported from multihead) with weights_from_torch's weights "
            "and compare that with mha(x, x, x, ...) called with no mask, not a pipeline of its "
            "own or a masked call."
        )


@test_case()
@kinds("a module that really differs")
def test_a_different_output_is_noticed(cross_check):
    what = "a module whose output was shifted by 0.5"
    result = _report(cross_check, _module(_OffOutput, seed=2), _input(2), what)
    assert np.isclose(result["output_max_abs_diff"], 0.5, atol=1e-6), (
        f"for {what} output_max_abs_diff should be 0.5, the largest |difference| between the "
        f"two (n, d_model) outputs; got {result['output_max_abs_diff']}"
    )
    assert not result["match"], f"for {what} match must be False; got {result}"


@test_case()
@kinds("a module that really differs")
def test_a_moderate_difference_on_a_float64_module_is_no_match(cross_check):
    what = "a float64 module whose output was made 0.5% larger"
    mha, X = _module(_SlightlyOffOutput, seed=6), _input(6)
    off, _ = _torch_pair(mha, X, mha.batch_first, average=False)
    real = float(np.abs(off).max()) * 0.005 / 1.005  # about 0.004 here
    result = _report(cross_check, mha, X, what)
    assert np.isclose(result["output_max_abs_diff"], real, rtol=1e-3, atol=1e-9), (
        f"for {what} output_max_abs_diff should be {real:.6f}, the largest |difference| between "
        f"the two outputs; got {result['output_max_abs_diff']}"
    )
    assert not result["match"], (
        f"for {what} match must be False: float64 rounding is about 1e-12, and on a float64 "
        f"module a difference above 1e-3 of the output's size is never a match; got {result}. "
        "Is the tolerance one for float16 or bfloat16 (1e-2), or the same for both dtypes?"
    )


@test_case()
@kinds("a module that really differs")
def test_different_weights_are_noticed(cross_check):
    what = "a module whose per-head attention weights were all raised by 0.1"
    result = _report(cross_check, _module(_OffWeights, seed=3), _input(3), what)
    assert np.isclose(result["weights_max_abs_diff"], 0.1, atol=1e-6), (
        f"for {what} weights_max_abs_diff should be 0.1, the largest |difference| between the "
        f"per-head weights; got {result['weights_max_abs_diff']}"
    )
    assert not result["match"], f"for {what} match must be False; got {result}"


@test_case()
@kinds("the inputs left unmodified")
def test_inputs_are_not_modified(cross_check):
    mha, X = _module(seed=4), _input(4)
    before_X, before_state = X.copy(), {k: v.clone() for k, v in mha.state_dict().items()}
    _report(cross_check, mha, X, "a float64 module")
    assert np.array_equal(X, before_X), "cross_check changed its input X in place"
    for k, v in mha.state_dict().items():
        assert torch.equal(v, before_state[k]), f"cross_check changed the module's {k}"
