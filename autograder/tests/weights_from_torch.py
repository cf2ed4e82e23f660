"""Hidden tests for weights_from_torch(mha). Trusted side only."""

from functools import cache

import numpy as np
import torch
from otter.test_files import test_case

from mha_grader.grading import checks
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

name = "weights_from_torch"
NAMES = ("Wq", "Wk", "Wv", "Wo")


@cache
def _module(seed: int, d_model: int, num_heads: int, dtype=torch.float64, **options):
    """A MultiheadAttention whose every parameter (biases included: torch zeroes them) is random."""
    options.setdefault("bias", False)
    mha = torch.nn.MultiheadAttention(d_model, num_heads, dtype=dtype, **options)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) / np.sqrt(d_model)))
    return mha.eval()


@cache
def _plain_module(seed: int, d_model: int, num_heads: int):
    """A float32 module whose q, k and v blocks are one symmetric matrix and whose output
    projection is symmetric too: transposing or reordering the blocks, or rounding to float32,
    changes nothing, while zeros, constants or a refusal are still wrong."""
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, dtype=torch.float32)
    rng = np.random.default_rng(seed)
    S, T = (rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for _ in range(2))
    S, T = (torch.from_numpy((A + A.T) / 2).float() for A in (S, T))
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([S, S, S]))
        mha.out_proj.weight.copy_(T)
    return mha.eval()


@cache
def _expected(mha) -> tuple[np.ndarray, ...]:
    """The reference arrays of a (cached, never modified) module, once per process."""
    return ref_cc.weights_from_torch(mha)


@cache
def _tokens_and_output(seed: int, mha) -> tuple[np.ndarray, np.ndarray]:
    """Tokens X (n, d_model) and the module's own output for them (batch_first module)."""
    X = np.random.default_rng(seed).standard_normal((5, mha.embed_dim))
    with torch.no_grad():
        x = torch.from_numpy(X).unsqueeze(0)
        return X, mha(x, x, x, need_weights=False)[0][0].numpy()


def _check_arrays(result, mha, values: bool = True) -> list[np.ndarray]:
    """The four arrays, each checked for type, shape, dtype and (if `values`) value."""
    if type(result) not in (tuple, list) or len(result) != 4:
        raise AssertionError(
            "weights_from_torch should return a tuple (Wq, Wk, Wv, Wo); your code returned "
            f"{checks.describe(result)}."
        )
    expected = _expected(mha)
    for got, want, label in zip(result, expected, NAMES, strict=True):
        what = f"{label} (item {NAMES.index(label)} of the tuple)"
        checks.check_array(got, what, "(d_model, d_model)", want.shape)
        if got.dtype != np.float64:
            raise AssertionError(
                f"{what} should be a float64 array whatever the module's dtype; your code "
                f"returned {checks.describe(got)}. Convert with .to(torch.float64) or "
                ".astype(np.float64)."
            )
        if values:
            checks.check_close(
                got, want, what, "(d_model, d_model)", ("row", "column"), strict=True
            )
    return list(result)


@test_case(name="float64 module, batch_first=False: the four projections, used as X @ W")
@checks.kinds("a float64 module")
def float64_module(weights_from_torch):
    mha = _module(701, 8, 2)
    _check_arrays(weights_from_torch(mha), mha)


@test_case(
    name="float32 module, batch_first=True: float64 arrays of its weights; every module unmodified"
)
@checks.kinds(
    "a float32 module: float64 arrays", "a batch_first=True module", "the module left unmodified"
)
def float32_module(weights_from_torch):
    mha = _module(702, 6, 3, torch.float32, batch_first=True)
    _check_arrays(weights_from_torch(mha), mha)
    # After a float32 module too: mha.double() or mha.to(...) converts the caller's module.
    checks.check_unmodified(weights_from_torch, "weights_from_torch(mha)", module=True)


@test_case(name="the weights reproduce the module's output with multi_head_attention")
@checks.kinds("a float64 module", "a batch_first=True module")
def reproduces_module(weights_from_torch):
    mha = _module(703, 12, 4, batch_first=True)
    Ws = _check_arrays(weights_from_torch(mha), mha, values=False)
    X, torch_out = _tokens_and_output(703, mha)
    out, _ = ref.multi_head_attention(X, *Ws, mha.num_heads)
    checks.check_close(
        out,
        torch_out,
        "multi_head_attention run with your four arrays (compared with the module's output)",
        "(n, d_model)",
        strict=True,
    )


@test_case(
    name="ValueError for a module with biases (bias=True, add_bias_kv=True) or with kdim/vdim "
    "different from embed_dim; the weights of a plain one"
)
@checks.kinds("ValueError: a module with biases", "ValueError: kdim or vdim not embed_dim")
def unsupported_modules(weights_from_torch):
    # A refusal counts only beside a right answer (raising whatever the input earns nothing),
    # on a module simple enough that a mistake charged by the other cases is not charged again.
    valid = _plain_module(707, 8, 4)
    _check_arrays(weights_from_torch(valid), valid)
    for mha in (_module(704, 8, 2, bias=True), _module(705, 8, 4, add_bias_kv=True)):
        checks.expect_value_error(
            lambda m=mha: weights_from_torch(m),
            "for a module with biases (bias=True or add_bias_kv)",
        )
    mha = _module(706, 8, 2, kdim=6, vdim=4)
    checks.expect_value_error(
        lambda: weights_from_torch(mha),
        "for a module with separate q/k/v projections (kdim/vdim differing from embed_dim)",
    )
