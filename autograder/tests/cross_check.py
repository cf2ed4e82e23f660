"""Hidden tests for cross_check(mha, X). Trusted side only.

Besides the plumbing (dtype, batch_first), these check honesty: the differences reported must
be the ones really there. Every case holds a float64 module, on which an honest report is
*exactly* what the student's own pipeline gives (its multi_head_attention, as crosscheck.py
imports it, run here with the same inputs before cross_check sees them: torch and NumPy are
deterministic). So a report that does not measure anything (a constant, "match" always or
never, torch compared with itself or with a float64 copy of itself, the previous call's report
replayed) fails every case, while a wrong multi_head_attention or weights_from_torch honestly
reported is not punished twice. A float32 module is honest within float32 rounding of the
reference pipeline or of the student's own (where that really differs from torch: a pipeline
replaying torch's output gets no say). A module with an added zero attention key really
differs from the pipeline: it must not be called a match (refusing it is honest too).
"""

import math
from functools import cache

import numpy as np
import torch
from otter.test_files import test_case

from mha_grader import compare
from mha_grader.errors import StudentCodeError, StudentRaised
from solutions import crosscheck as ref_cc
from solutions import multihead as ref

name = "cross_check"
KEYS = ("output_max_abs_diff", "weights_max_abs_diff", "match")
# Differences below NOISE * scale are rounding; above LARGE * scale the two clearly disagree.
NOISE = {torch.float64: 1e-10, torch.float32: 1e-5}
LARGE = 1e-2
ROUNDING_BAND = 20.0  # an honest float32 report is within this factor of the rounding we measure


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
    seed: int, n: int, d_model: int, num_heads: int, dtype, batch_first: bool, **options
) -> dict:
    """Module, tokens X, the module's own (out, weights) and the reference pipeline's real
    differences from them; computed once per process. X has a spread of 3, so that rounding
    differences are many different multiples of the smallest step, not a few guessable ones."""
    mha = _module(seed, d_model, num_heads, dtype, batch_first, **options)
    X = np.random.default_rng(seed).standard_normal((n, d_model)) * 3.0
    x = torch.as_tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if batch_first else x.unsqueeze(1)
    with torch.no_grad():
        t_out, t_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    t_out = (t_out[0] if batch_first else t_out[:, 0]).to(torch.float64).numpy()  # (n, d_model)
    t_w = t_w[0].to(torch.float64).numpy()  # (num_heads, n, n), or n + 1 keys with add_zero_attn
    probe = {"mha": mha, "X": X, "torch": (t_out, t_w)}
    Ws = ref_cc.weights_from_torch(mha)
    probe["reference"] = _diffs(probe, *ref.multi_head_attention(X, *Ws, num_heads))
    return probe


def _diffs(probe, out: np.ndarray, weights: np.ndarray) -> tuple[float, float | None]:
    """Real largest differences between torch and a pipeline's (out, weights); None for the
    weights when their shapes differ (then no comparison is defined)."""
    t_out, t_w = probe["torch"]
    d_w = float(np.max(np.abs(weights - t_w))) if weights.shape == t_w.shape else None
    return float(np.max(np.abs(out - t_out))), d_w


def _student_diffs(probe, multi_head_attention, weights_from_torch, reference_weights=False):
    """The real differences between torch and the student's own pipeline (with the reference
    weights, or with those of the student's weights_from_torch), or None if that pipeline does
    not run or returns something unusable."""
    if multi_head_attention is None or (weights_from_torch is None and not reference_weights):
        return None
    mha, X = probe["mha"], probe["X"]
    d, h, n = mha.embed_dim, mha.num_heads, X.shape[0]
    try:
        Ws = ref_cc.weights_from_torch(mha) if reference_weights else weights_from_torch(mha)
        if type(Ws) not in (tuple, list) or len(Ws) != 4:
            return None
        Ws = [compare.check_array(W, "W", "(d_model, d_model)", (d, d)) for W in Ws]
        out, weights = compare.check_pair(multi_head_attention(X, *Ws, h), "mha", "out", "w")
        out = compare.check_array(out, "out", "(n, d_model)", (n, d))
        weights = compare.check_array(weights, "weights", "(num_heads, n, n)", (h, n, n))
    except (StudentCodeError, AssertionError):
        return None
    return _diffs(probe, out.astype(np.float64), weights.astype(np.float64))


def _report(result) -> tuple[float, float, bool]:
    if type(result) is not dict:
        raise AssertionError(
            "cross_check should return a dict with keys 'output_max_abs_diff', "
            f"'weights_max_abs_diff' and 'match'; your code returned {compare.describe(result)}."
        )
    missing = [k for k in KEYS if k not in result]
    if missing:
        raise AssertionError(f"the dict returned by cross_check lacks the key(s) {missing}.")
    return (
        compare.check_float(result["output_max_abs_diff"], "'output_max_abs_diff'"),
        compare.check_float(result["weights_max_abs_diff"], "'weights_max_abs_diff'"),
        compare.check_bool(result["match"], "'match'"),
    )


def _agrees(reported: float, real: float | None, noise: float, low_bound: bool) -> bool:
    """Whether a reported largest difference is an honest measurement of `real`."""
    if real is None:  # not comparable: any number (nan included) is an honest answer
        return True
    if not math.isfinite(reported) or reported < 0:
        return False
    if real <= noise:  # rounding level: implementations differ, but only within the noise
        return reported <= noise and (not low_bound or reported >= real / ROUNDING_BAND)
    return abs(reported - real) <= 1e-3 * real + noise


def _noise(probe) -> tuple[float, float]:
    """Rounding level of the output (relative to its scale) and of the weights, by dtype."""
    dtype = probe["mha"].in_proj_weight.dtype
    return NOISE[dtype] * _scale(probe), NOISE[dtype]


def _scale(probe) -> float:
    return max(1.0, float(np.max(np.abs(probe["torch"][0]))))


def _own_pipeline(probe, multi_head_attention, weights_from_torch, least: float):
    """The student's pipeline's real differences from torch, when its output differs from
    torch by more than ``least``; otherwise (or when it does not run) None."""
    real = _student_diffs(probe, multi_head_attention, weights_from_torch)
    return real if real is not None and real[0] > least else None


def _check_plain(cross_check, multi_head_attention, weights_from_torch, probe) -> None:
    """A module the plain pipeline reproduces: honest differences and a fitting match."""
    r_out, r_w, match = _report(cross_check(probe["mha"], probe["X"]))
    dtype = probe["mha"].in_proj_weight.dtype
    noise_out, noise_w = _noise(probe)
    low = dtype == torch.float32  # float32 rounding is never exactly zero on these inputs

    def honest(real):
        return _agrees(r_out, real[0], noise_out, low) and _agrees(r_w, real[1], noise_w, low)

    real = probe["reference"]
    if not honest(real):
        real = _own_pipeline(probe, multi_head_attention, weights_from_torch, noise_out)
        if real is None or not honest(real):
            raise AssertionError(_dishonest_message(r_out, r_w, probe["reference"], dtype))
    small = real[0] <= noise_out and (real[1] is None or real[1] <= noise_w)
    large = real[0] > LARGE * _scale(probe) or (real[1] is not None and real[1] > LARGE)
    if small and not match:
        raise AssertionError(
            "cross_check measured differences at rounding level for this module's dtype but "
            "reported match=False: choose a tolerance fit for the dtype (float32 keeps about 7 "
            "significant digits, float64 about 16), relative to the output's scale."
        )
    if large and match:
        raise AssertionError(
            "cross_check reported match=True although the module's results and the NumPy "
            "pipeline's differ by far more than rounding: `match` must say whether both "
            "differences are within the tolerance."
        )


def _check_different(cross_check, multi_head_attention, weights_from_torch, probe) -> None:
    """A module with add_zero_attn: torch appends a zero key, so its output really differs
    from the plain pipeline's and its weights gain a column. A report of the real output
    difference with match=False is honest, and so is an error; "match" is not."""
    try:
        result = cross_check(probe["mha"], probe["X"])
    except StudentRaised:
        return
    r_out, r_w, match = _report(result)
    if match:
        raise AssertionError(
            "cross_check reported match=True for a module whose output really differs from the "
            "NumPy pipeline (it adds a zero attention key): it must measure the differences, "
            "not assume them."
        )
    noise, _ = _noise(probe)
    least = LARGE * _scale(probe)  # this module's real difference is far above rounding
    if not _agrees(r_out, probe["reference"][0], noise, False):
        own = _own_pipeline(probe, multi_head_attention, weights_from_torch, least)
        if own is not None and _agrees(r_out, own[0], noise, False):
            return
        raise AssertionError(
            "for a module whose output really differs from the NumPy pipeline (it adds a zero "
            "attention key), cross_check said match=False but its 'output_max_abs_diff' is not "
            "the real largest difference between the two outputs."
        )


def _exactly(reported: float, real: float | None) -> bool:
    """A report that is the measured difference itself (a few digits of slack for the order
    of subtraction), not merely of its size: at rounding level any small number would do."""
    if real is None:
        return True
    return math.isfinite(reported) and abs(reported - real) <= 1e-6 * real


def _check_exact(cross_check, multi_head_attention, weights_from_torch, probe) -> None:
    """A float64 module: the report must be exactly the differences of the student's own
    pipeline. They are measured here first, with the reference weights, before cross_check or
    the student's weights_from_torch has seen this module or these tokens (so nothing stashed
    can be replayed); only when the student's own weights make their pipeline really differ
    from torch do those count instead (a wrong adapter honestly reported)."""
    own = _student_diffs(probe, multi_head_attention, None, reference_weights=True)
    r_out, r_w, match = _report(cross_check(probe["mha"], probe["X"]))
    noise_out, noise_w = _noise(probe)
    real = own if own is not None and _exactly(r_out, own[0]) and _exactly(r_w, own[1]) else None
    if real is None:
        adapted = _student_diffs(probe, multi_head_attention, weights_from_torch)
        if adapted is not None and adapted[0] > noise_out:
            if _exactly(r_out, adapted[0]) and _exactly(r_w, adapted[1]):
                real = adapted
    if real is None:
        raise AssertionError(
            "for a float64 module, cross_check's report is not what running the module and your "
            "own multi_head_attention (imported from multihead.py, with the weights from "
            "weights_from_torch) gives: report the largest absolute differences between the "
            "two exactly as you compute them (for float64 both are tiny, but they are not zero "
            "and not just any tiny number)."
        )
    small = real[0] <= noise_out and (real[1] is None or real[1] <= noise_w)
    if small != match:
        raise AssertionError(
            "for a float64 module, cross_check reported match=False although the differences "
            "it measured are within float64 rounding."
            if small
            else "cross_check reported match=True although the module's results and your "
            "pipeline's differ by far more than rounding."
        )


def _check(cross_check, multi_head_attention, weights_from_torch, *probes) -> None:
    """Each module of a case, in turn: float64 ones exactly, float32 ones within rounding,
    ones with a zero attention key must not match."""
    for probe in probes:
        if probe["mha"].add_zero_attn:
            _check_different(cross_check, multi_head_attention, weights_from_torch, probe)
        elif probe["mha"].in_proj_weight.dtype == torch.float64:
            _check_exact(cross_check, multi_head_attention, weights_from_torch, probe)
        else:
            _check_plain(cross_check, multi_head_attention, weights_from_torch, probe)


def _dishonest_message(r_out: float, r_w: float, real, dtype) -> str:
    parts = []
    for label, reported, actual in (("output", r_out, real[0]), ("weights", r_w, real[1])):
        if actual is None or math.isclose(reported, actual, rel_tol=1e-3):
            continue
        if not math.isfinite(reported) or reported < 0:
            parts.append(f"the {label} difference is not a non-negative number")
        elif reported < actual:
            parts.append(f"the {label} difference reported is smaller than the real one")
        else:
            parts.append(f"the {label} difference reported is larger than the real one")
    detail = "; ".join(parts) or "the reported differences are not the ones measured"
    rounding = (
        " A float32 module never agrees exactly with a float64 pipeline: report the largest "
        "|difference| you measure, however small."
        if dtype == torch.float32
        else ""
    )
    return (
        f"cross_check's report does not match what this module and a NumPy pipeline really "
        f"compute: {detail}. Run X through the module (in its own dtype, with the layout its "
        f"batch_first expects) and through your pipeline, and report the largest absolute "
        f"differences of the outputs and of the per-head weights.{rounding}"
    )


# Every case holds a float64 module (checked exactly), in the case's layout; some add a float32
# one or one with a zero attention key (which really differs from the pipeline).


@test_case(
    name="float64, batch_first=False: the differences measured and match=True; the real "
    "difference and no match once a zero attention key is added"
)
def float64_sequence_first(cross_check, multi_head_attention, weights_from_torch):
    plain = _probe(801, 5, 8, 2, torch.float64, False)
    different = _probe(805, 5, 8, 2, torch.float64, False, add_zero_attn=True)
    _check(cross_check, multi_head_attention, weights_from_torch, plain, different)


@test_case(name="float64, batch_first=True, four heads: the differences measured, exactly")
def float64_batch_first(cross_check, multi_head_attention, weights_from_torch):
    exact = _probe(802, 3, 12, 4, torch.float64, True)
    _check(cross_check, multi_head_attention, weights_from_torch, exact)


@test_case(
    name="float32, batch_first=True: float32 rounding reported honestly, and a float64 module"
)
def float32_batch_first(cross_check, multi_head_attention, weights_from_torch):
    plain = _probe(803, 6, 6, 2, torch.float32, True)
    exact = _probe(809, 4, 6, 2, torch.float64, True)
    _check(cross_check, multi_head_attention, weights_from_torch, plain, exact)


@test_case(
    name="float32, batch_first=False, three heads: rounding, a float64 module, and no match "
    "once a zero key is added"
)
def float32_sequence_first(cross_check, multi_head_attention, weights_from_torch):
    plain = _probe(804, 4, 12, 3, torch.float32, False)
    exact = _probe(810, 5, 6, 3, torch.float64, False)
    different = _probe(808, 5, 6, 3, torch.float32, False, add_zero_attn=True)
    _check(cross_check, multi_head_attention, weights_from_torch, plain, exact, different)
