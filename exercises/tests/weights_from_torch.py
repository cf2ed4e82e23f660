"""Public checks for weights_from_torch(mha). The hidden tests use other modules and inputs.

The expected projections are computed by torch itself, from the layout the stub's docstring
describes (q, k, v stacked row-wise in in_proj_weight; a Linear computes x @ W.T).
"""

import numpy as np
import torch
from otter.test_files import test_case

name = "weights_from_torch"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _show(x):
    """What a value is, for a message: type, shape, dtype and a short excerpt."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, precision=3, threshold=8, edgeitems=2).replace("\n", "")
        return f"a {x.dtype} array of shape {x.shape}: {text}"
    if x is None:
        return "None (is a `return` missing?)"
    if isinstance(x, torch.Tensor):
        return f"a torch tensor of shape {tuple(x.shape)} (convert it with .detach().numpy())"
    if isinstance(x, tuple | list):
        return f"a {type(x).__name__} of {len(x)}: " + ", ".join(_show(v) for v in x[:4])
    return f"a {type(x).__name__}: {str(x)[:80]}"


def _module(d_model=4, num_heads=2, dtype=torch.float32, seed=0, **kwargs):
    torch.manual_seed(seed)  # torch's random init: non-symmetric matrices, distinct q/k/v blocks
    kwargs.setdefault("bias", False)
    return torch.nn.MultiheadAttention(d_model, num_heads, dtype=dtype, **kwargs)


def _weights(weights_from_torch, mha, what):
    d = mha.embed_dim
    result = weights_from_torch(mha)
    assert isinstance(result, tuple | list) and len(result) == 4, (
        f"weights_from_torch must return a tuple (Wq, Wk, Wv, Wo); for {what} it returned "
        f"{_show(result)}"
    )
    for label, W in zip(("Wq", "Wk", "Wv", "Wo"), result, strict=True):
        assert isinstance(W, np.ndarray), f"{label} must be a NumPy array; got {_show(W)}"
        assert W.shape == (d, d), (
            f"{label} must have shape (d_model, d_model) = {(d, d)}; got {W.shape}"
        )
        assert W.dtype == np.float64, (
            f"{label} must be float64 whatever the module's dtype; for {what} got {W.dtype} "
            "(use .astype(np.float64) or .to(torch.float64))"
        )
    return result


@test_case()
@kinds("a float32 module: float64 arrays", "a float64 module")
def test_returns_four_float64_matrices(weights_from_torch):
    _weights(weights_from_torch, _module(dtype=torch.float32), "a float32 module")
    _weights(weights_from_torch, _module(dtype=torch.float64), "a float64 module")


@test_case()
@kinds("a float64 module", "a batch_first=True module")
def test_projections_match_torch(weights_from_torch):
    # The layout (batch_first) changes how the module reads its input, not its weights.
    for batch_first in (False, True):
        what = f"a float64 module with batch_first={batch_first}"
        mha = _module(d_model=4, num_heads=2, dtype=torch.float64, seed=1, batch_first=batch_first)
        _check_projections(weights_from_torch, mha, what)
        _check_float64_precision(weights_from_torch, mha, what)


def _check_float64_precision(weights_from_torch, mha, what):
    """A float64 module's weights, transposed, are exact: nothing to round."""
    d = mha.embed_dim
    blocks = [*mha.in_proj_weight.detach().reshape(3, d, d), mha.out_proj.weight.detach()]
    mine = _weights(weights_from_torch, mha, what)
    for label, W, b in zip(("Wq", "Wk", "Wv", "Wo"), mine, blocks, strict=True):
        exact = b.numpy().T
        if np.allclose(W, exact, rtol=1e-12, atol=0.0):
            continue
        rounded = b.float().double().numpy().T
        hint = ""
        if np.allclose(W, rounded, rtol=1e-12, atol=0.0):
            hint = (
                " It equals torch's weight rounded to float32 and back: convert straight to "
                "float64 (.double() or .to(torch.float64)), with no float32 step in between."
            )
        raise AssertionError(
            f"for {what}, {label} agrees with the module's weight only to about "
            f"{np.abs(W - exact).max():.1e}: a float64 module's weights are exact in float64, "
            f"so nothing should be lost on the way.{hint}"
        )


def _check_projections(weights_from_torch, mha, what):
    Wq, Wk, Wv, Wo = _weights(weights_from_torch, mha, what)
    d = mha.embed_dim
    X = np.random.default_rng(0).normal(size=(3, d))
    x = torch.from_numpy(X)
    blocks = mha.in_proj_weight.detach().reshape(3, d, d)  # q, k, v blocks, (out, in) each
    with torch.no_grad():
        expected = [torch.nn.functional.linear(x, blocks[i]).numpy() for i in range(3)]
        expected.append(mha.out_proj(x).numpy())
    raw = [b.numpy() for b in blocks] + [mha.out_proj.weight.detach().numpy()]
    mine = (Wq, Wk, Wv, Wo)
    for i, label in enumerate(("Wq", "Wk", "Wv", "Wo")):
        if np.allclose(X @ mine[i], expected[i]):
            continue
        hint = ""
        if np.allclose(mine[i], raw[i]):
            hint = (
                " It equals torch's stored matrix as is: torch stores (out, in) and computes "
                "x @ W.T, so transpose it to use it as X @ W."
            )
        else:
            for j, other in enumerate("qkv"):
                if j != i and (np.allclose(mine[i], raw[j].T) or np.allclose(mine[i], raw[j])):
                    hint = (
                        f" It holds the {other} block of in_proj_weight: the rows are stacked "
                        "in the order q, k, v, d_model rows each."
                    )
        raise AssertionError(
            f"for {what}, X @ {label} must equal what the module computes for that projection; "
            f"it does not (X of shape (3, 4), your {label}: {_show(mine[i])}).{hint}"
        )


@test_case()
@kinds("ValueError: a module with biases", "ValueError: kdim or vdim not embed_dim")
def test_module_with_biases_or_separate_projections_raises(weights_from_torch):
    cases = [
        (_module(bias=True), "a module built with bias=True"),
        (_module(add_bias_kv=True), "a module built with add_bias_kv=True"),
        (_module(kdim=3, vdim=3), "a module with kdim=3, vdim=3 (separate q/k/v projections)"),
    ]
    for mha, what in cases:
        try:
            result = weights_from_torch(mha)
        except ValueError:
            continue
        raise AssertionError(
            f"for {what} the four matrices cannot reproduce the module: weights_from_torch must "
            f"raise ValueError; it returned {_show(result)}"
        )


@test_case()
@kinds("the module left unmodified")
def test_module_is_not_modified(weights_from_torch):
    mha = _module(dtype=torch.float64, seed=3)
    before = {k: v.clone() for k, v in mha.state_dict().items()}
    _weights(weights_from_torch, mha, "a float64 module")
    for k, v in mha.state_dict().items():
        assert torch.equal(v, before[k]), f"weights_from_torch changed the module's {k}"
