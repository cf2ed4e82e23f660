"""Hidden tests for cross_check(mha, X). Trusted side only.

Besides the plumbing (dtype, batch_first), these check honesty: the differences reported must
be the ones really there (the rules: ``mha_grader.grading.honesty``). This file makes the
modules and tokens of each case; every case holds modules the plain pipeline reproduces and,
last, one that adds a zero attention key, which really differs from the plain pipeline. On one
float64 module a pipeline off by a moderate, known amount (made by the grader) must be reported
as no match: float64's tolerance is at most 1e-3 of the output's size.
"""

from functools import cache

import numpy as np
import torch
from otter.test_files import test_case

from mha_grader.grading import checks, honesty
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

name = "cross_check"


@cache
def _module(seed: int, d_model: int, num_heads: int, dtype, batch_first: bool, **options):
    """A bias-free MultiheadAttention with random weights."""
    mha = torch.nn.MultiheadAttention(
        d_model, num_heads, bias=False, batch_first=batch_first, dtype=dtype, **options
    )
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) / np.sqrt(d_model)))
    return mha.eval()


@cache
def _probe(
    seed: int,
    n: int,
    d_model: int,
    num_heads: int,
    dtype,
    batch_first: bool,
    zero_row: int | None = None,
    **options,
) -> honesty.Probe:
    """Module, tokens X, the module's own (out, weights), the reference weights and the
    reference pipeline's result; computed once per process. X has a spread of 3, so
    that rounding differences are many different multiples of the smallest step; with
    ``zero_row`` that token's features are all 0 (a token like any other: the module is called
    without a mask, and every key gets its softmax weight)."""
    mha = _module(seed, d_model, num_heads, dtype, batch_first, **options)
    X = np.random.default_rng(seed).standard_normal((n, d_model)) * 3.0
    if zero_row is not None:
        X[zero_row] = 0.0
    x = torch.as_tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if batch_first else x.unsqueeze(1)
    # One intra-op thread, as in the worker, whoever computes this first: the float64 check
    # compares a report with this output to the last bits, and threads change the rounding.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            t_out, t_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    finally:
        torch.set_num_threads(threads)
    t_out = (t_out[0] if batch_first else t_out[:, 0]).to(torch.float64).numpy()  # (n, d_model)
    t_w = t_w[0].to(torch.float64).numpy()  # (num_heads, n, n), or n + 1 keys with a zero key
    Ws = ref_cc.weights_from_torch(mha)
    # The reference pipeline's (out, weights) with the reference weights: every submission's
    # pipelines are compared with it (read-only: shared by the whole batch).
    pair = ref.multi_head_attention(X, *Ws, num_heads)
    for a in pair:
        a.setflags(write=False)
    return honesty.Probe(mha, X, (t_out, t_w), Ws, pair, str(dtype).removeprefix("torch."))


def _check(
    case, cross_check, multi_head_attention, weights_from_torch, *probes, moderate=()
) -> None:
    honesty.check(
        case,
        cross_check,
        multi_head_attention,
        weights_from_torch,
        probes,
        ref.multi_head_attention,
        ref_cc.weights_from_torch,
        moderate,
    )


# Every case holds modules the pipeline reproduces, in the case's layout, then one with a zero
# attention key on one token (measured: it really differs from the pipeline).


@test_case(
    name="float64, batch_first=False: the differences measured and match=True; the real "
    "difference and no match once a zero attention key is added"
)
@checks.kinds(
    "float64, batch_first=False",
    "a module that really differs",
    "a right multi_head_attention in place of yours",
)
def float64_sequence_first(cross_check, multi_head_attention, weights_from_torch, case):
    plain = _probe(801, 5, 8, 2, torch.float64, False)
    zero_token = _probe(811, 5, 8, 2, torch.float64, False, zero_row=2)  # X's row 2 all 0
    different = _probe(805, 1, 8, 2, torch.float64, False, add_zero_attn=True)
    _check(
        case, cross_check, multi_head_attention, weights_from_torch, plain, zero_token, different
    )


@test_case(
    name="float64, batch_first=True, four heads: the differences measured, no match for a "
    "pipeline off by more than 1e-3, and a zero key's difference"
)
@checks.kinds("float64, batch_first=True", "a module that really differs")
def float64_batch_first(cross_check, multi_head_attention, weights_from_torch, case):
    plain = _probe(802, 3, 12, 4, torch.float64, True)
    different = _probe(806, 1, 12, 4, torch.float64, True, add_zero_attn=True)
    # plain's output is about 3 in size: the moderate difference (2e-3 of it, about 6e-3) lies
    # above float64's bound (1e-3 of it) and below what float32 may call a match (1e-2)
    _check(
        case,
        cross_check,
        multi_head_attention,
        weights_from_torch,
        plain,
        different,
        moderate=(plain,),
    )


@test_case(
    name="float32, batch_first=True: float32 rounding reported honestly, a float64 module, and "
    "a zero key's difference"
)
@checks.kinds(
    "float32, batch_first=True", "float64, batch_first=True", "a module that really differs"
)
def float32_batch_first(cross_check, multi_head_attention, weights_from_torch, case):
    plain = _probe(803, 6, 6, 2, torch.float32, True)
    exact = _probe(809, 4, 6, 2, torch.float64, True)
    different = _probe(807, 1, 6, 2, torch.float32, True, add_zero_attn=True)
    _check(case, cross_check, multi_head_attention, weights_from_torch, plain, exact, different)


@test_case(
    name="float32, batch_first=False, three heads: rounding, a float64 module, and no match "
    "once a zero key is added; every module and X unmodified"
)
@checks.kinds(
    "float32, batch_first=False",
    "float64, batch_first=False",
    "a module that really differs",
    "the inputs left unmodified",
)
def float32_sequence_first(cross_check, multi_head_attention, weights_from_torch, case):
    plain = _probe(804, 4, 12, 3, torch.float32, False)
    exact = _probe(810, 5, 6, 3, torch.float64, False)
    different = _probe(808, 1, 6, 3, torch.float32, False, add_zero_attn=True)
    _check(case, cross_check, multi_head_attention, weights_from_torch, plain, exact, different)
    # Last: every call so far, float32 modules among them (mha.double() converts the caller's).
    # A weights_from_torch that changes its module is charged in its own question: a cross_check
    # that changed its module too (most likely by calling it) is not charged again here.
    if not weights_from_torch.inputs_modified:
        checks.check_unmodified(cross_check, "cross_check(mha, X)", module=True)
