"""cross_check's honesty rules: the differences a report gives must be the ones really there.

The hidden test (``autograder/tests/cross_check.py``) makes the modules and tokens of each case
and hands them here as ``Probe``s, together with its ``context.Case``. Every case holds modules
the plain pipeline reproduces (float64 or float32) and, last, one that adds a zero attention key,
which really differs from the plain pipeline by far more than rounding (on one token, so that
its per-head weights, (1, 2) against the pipeline's (1, 1), still broadcast in the usual
subtraction).

- A module the pipeline reproduces: the report is honest when it is at rounding level (any
  pipeline's: float64, float32, einsum, loops, written inline or imported), or when it is the
  real difference of a pipeline built from the student's own weights_from_torch and
  multi_head_attention (an error carried forward, ``carry``: a wrong callee honestly reported
  keeps cross_check's points). ``match`` must fit the dtype: True at its rounding, False far
  above it.
- On a float64 module a difference above 1e-3 of the output's size is no match (float32 keeps
  the bound of 1e-2): with its calls of multi_head_attention answered by the reference moved by
  a moderate, known amount (twice that bound), a cross_check that reports the difference and
  match=True is charged (``moderate``, where the hidden test asks for it).
- The module with a zero key: the report must be its real output difference (from the reference
  pipeline, or, carried forward, from the student's own) with match=False. This is what a
  report that measures nothing (a constant, "match" always, torch compared with itself or with
  a float64 copy of itself, the previous call's report replayed) cannot give. A cross_check that
  raises on it instead still shows that it measures when its report for a float64 module of
  the case is exactly what its own imported pipeline gives.

- A report honest only because the student's wrong multi_head_attention cancels a mistake of
  cross_check's own (torch's head-averaged weights against an average of its own) is charged:
  with its calls of multi_head_attention answered by the reference, its report on a module the
  pipeline reproduces must still be honest, and its ``match`` fit for the dtype (under the
  carry-forward policy, as ``carry``'s).

- A report honest for the reference pipeline only, where the student's own
  multi_head_attention really differs from it on the module (``Pipelines.own``), is another
  pipeline's (a right one cross_check computes itself): charged (``NOT_OWN``), as is a report of
  float32 rounding on a float64 module that the student's own whole pipeline reproduces to
  float64 rounding, whether or not multi_head_attention was called (``COARSE``).

The student's pipelines are run on every module before cross_check has seen it (torch and NumPy
are deterministic), so that nothing cross_check stashes can be replayed into them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from mha_check.questions import CALLEES as QUESTION_CALLEES

from ..calls import CalleeCall, Observed, answering
from ..diagnose.moderate import moved
from ..errors import NotAttempted, StudentCodeError, StudentRaised
from . import carry, checks
from .context import Carried, Case

KEYS = ("output_max_abs_diff", "weights_max_abs_diff", "match")
# Differences below NOISE * scale are rounding for the module's dtype; above LARGE * scale the
# two clearly disagree. A report up to ROUNDING * scale on a module the pipeline reproduces is
# rounding of some pipeline (one computing in float32 included).
NOISE = {"float64": 1e-10, "float32": 1e-5}
ROUNDING = 1e-5
LARGE = 1e-2
ZERO_KEY = "a module that adds a zero attention key"
CALLEES = QUESTION_CALLEES["cross_check"]

Pair = tuple[np.ndarray, np.ndarray]
ReferenceMHA = Callable[..., Pair]  # the reference multi_head_attention(X, Wq, Wk, Wv, Wo, h)


@dataclasses.dataclass(frozen=True)
class Probe:
    """One module of a case: the module, the tokens X and what is really there.

    ``torch``: the module's own (out, weights) as float64, (n, d_model) and (num_heads, n, n)
    (n + 1 keys with a zero key); ``Ws``: the reference adapter's weights; ``pair``: the
    reference pipeline's (out, weights) with them (read-only: shared by the whole batch)."""

    mha: Any  # torch.nn.MultiheadAttention
    X: np.ndarray
    torch: Pair
    Ws: tuple[np.ndarray, ...]
    pair: Pair
    dtype: str  # "float64" or "float32": the module's parameters

    @cached_property
    def reference(self) -> tuple[float, float | None]:
        """The reference pipeline's real differences from the module."""
        return self.diffs(*self.pair)

    def diffs(self, out: np.ndarray, weights: np.ndarray) -> tuple[float, float | None]:
        """Real largest differences between the module and a pipeline's (out, weights); None
        for the weights when their shapes differ (then any number reported for them is
        honest)."""
        t_out, t_w = self.torch
        d_w = float(np.max(np.abs(weights - t_w))) if weights.shape == t_w.shape else None
        return float(np.max(np.abs(out - t_out))), d_w

    @cached_property
    def scale(self) -> float:
        return max(1.0, float(np.max(np.abs(self.torch[0]))))

    @property
    def zero_key(self) -> bool:
        return bool(self.mha.add_zero_attn)

    @property
    def float64(self) -> bool:
        return self.dtype == "float64"


# -- the student's own pipelines, run before cross_check sees a module -----------------------


@dataclasses.dataclass
class Pipeline:
    """The real differences of a pipeline built from some of the student's callees (``wrong``:
    those whose results differ from the reference's here), or why it could not run."""

    diffs: tuple[float, float | None] | None = None
    wrong: tuple[str, ...] = ()
    failed: tuple[str, str] | None = None  # (callee, what it did) when it could not run
    imported: bool = False  # the student's own multi_head_attention is in it
    failure: StudentCodeError | None = None  # what the callee raised, when it raised


@dataclasses.dataclass
class Pipelines:
    """Every pipeline of the student's callees on one module."""

    own: list[Pipeline] = dataclasses.field(default_factory=list)
    # the student's weights_from_torch gave the reference's weights, in float64, for this module
    exact_adapter: bool = False

    @property
    def failed(self) -> tuple[str, str] | None:
        return next((p.failed for p in self.own if p.failed), None)

    @property
    def failure(self) -> StudentCodeError | None:
        return next((p.failure for p in self.own if p.failed), None)

    @property
    def raised(self) -> str | None:
        """The callee whose failure here was a raise of the student's code, if it was."""
        failed = self.failed
        return failed[0] if failed and isinstance(self.failure, StudentRaised) else None


def _many(func, calls: list[tuple]) -> list:
    """The student's ``func`` on several argument tuples (one exchange where it can be)."""
    many = getattr(func, "many", None)
    if many is not None and len(calls) > 1:
        return many([(args, {}) for args in calls])
    results = []
    for args in calls:
        try:
            results.append(func(*args))
        except StudentCodeError as e:
            results.append(e)
    return results


def _usable_weights(Ws, d: int) -> list[np.ndarray] | None:
    if type(Ws) not in (tuple, list) or len(Ws) != 4:
        return None
    if not all(type(W) is np.ndarray and W.shape == (d, d) and W.dtype.kind == "f" for W in Ws):
        return None
    return [W.astype(np.float64) for W in Ws]


def _usable_pair(result, n: int, d: int):
    """(out, weights) as float64 when the output has the contract's shape. Weights of another
    shape than (num_heads, n, n) (one head's, an average) still make a pipeline: its output
    difference is measured, its weights difference is not comparable (``Probe.diffs``), so a
    cross_check honestly reporting a wrong pipeline is carried as for any other mistake."""
    if type(result) not in (tuple, list) or len(result) != 2:
        return None
    out, weights = result
    if type(out) is not np.ndarray or out.shape != (n, d) or out.dtype.kind != "f":
        return None
    if type(weights) is not np.ndarray or weights.dtype.kind != "f":
        return None
    return out.astype(np.float64), weights.astype(np.float64)


def pipelines(
    probes: tuple[Probe, ...], weights_from_torch, multi_head_attention, reference: ReferenceMHA
) -> list[Pipelines]:
    """The student's pipelines on each module: its multi_head_attention with the reference
    weights (called first, before its weights_from_torch has seen the module), then with the
    weights of its weights_from_torch, and the reference multi_head_attention with those."""
    found = [Pipelines() for _ in probes]
    if weights_from_torch is None or multi_head_attention is None:
        return found
    with_reference = [(p.X, *p.Ws, p.mha.num_heads) for p in probes]
    for i, result in enumerate(_many(multi_head_attention, with_reference)):
        found[i].own.append(
            _own(probes[i], with_reference[i], result, (), reference, probes[i].pair)
        )
    adapted = _many(weights_from_torch, [(p.mha,) for p in probes])
    calls, where = [], []
    for i, (p, Ws) in enumerate(zip(probes, adapted, strict=True)):
        d, h = p.mha.embed_dim, p.mha.num_heads
        if isinstance(Ws, StudentCodeError):
            what = carry.failure_words(Ws, "cross_check")
            found[i].own.append(Pipeline(failed=("weights_from_torch", what), failure=Ws))
            continue
        mine = _usable_weights(Ws, d)
        if mine is None:
            what = "does not return four (d_model, d_model) float arrays for this module"
            found[i].own.append(Pipeline(failed=("weights_from_torch", what)))
            continue
        if all(checks.allclose(a, b, 1e-6, 1e-9) for a, b in zip(mine, p.Ws, strict=True)):
            found[i].exact_adapter = all(
                W.dtype == np.float64 and checks.allclose(W.astype(np.float64), R, 0.0, 1e-13)
                for W, R in zip(Ws, p.Ws, strict=True)
            )
            continue
        pair = reference(p.X, *mine, h)
        found[i].own.append(Pipeline(p.diffs(*pair), ("weights_from_torch",)))
        calls.append((p.X, *mine, h))
        where.append(i)
    for i, args, result in zip(where, calls, _many(multi_head_attention, calls), strict=True):
        found[i].own.append(_own(probes[i], args, result, ("weights_from_torch",), reference))
    return found


def _own(
    probe: Probe, args: tuple, result, wrong: tuple[str, ...], reference: ReferenceMHA, want=None
) -> Pipeline:
    """The student's multi_head_attention's result on ``args`` as a pipeline (``want``: the
    reference's result on ``args`` when already known)."""
    d, n = probe.mha.embed_dim, probe.X.shape[0]
    if isinstance(result, StudentCodeError):
        what = carry.failure_words(result, "cross_check")
        return Pipeline(failed=("multi_head_attention", what), imported=True, failure=result)
    pair = _usable_pair(result, n, d)
    if pair is None:
        what = "does not return an (n, d_model) float output and float weights for this module"
        return Pipeline(failed=("multi_head_attention", what), imported=True)
    if want is None:
        want = reference(*args)
    differs = not all(
        a.shape == b.shape and checks.allclose(a, b, 1e-4, 1e-9)
        for a, b in zip(pair, want, strict=True)
    )
    wrong = wrong + (("multi_head_attention",) if differs else ())
    return Pipeline(probe.diffs(*pair), wrong, imported=True)


# -- judging a report ---------------------------------------------------------------------


def read_report(result) -> tuple[float, float, bool]:
    """The three values of a cross_check report; AssertionError when it is not one."""
    if type(result) is not dict:
        raise AssertionError(
            "cross_check should return a dict with keys 'output_max_abs_diff', "
            f"'weights_max_abs_diff' and 'match'; your code returned {checks.describe(result)}."
        )
    missing = [k for k in KEYS if k not in result]
    if missing:
        raise AssertionError(f"the dict returned by cross_check lacks the key(s) {missing}.")
    return (
        checks.check_float(result["output_max_abs_diff"], "'output_max_abs_diff'"),
        checks.check_float(result["weights_max_abs_diff"], "'weights_max_abs_diff'"),
        checks.check_bool(result["match"], "'match'"),
    )


def _agrees(reported: float, real: float | None, rounding: float) -> bool:
    """Whether a reported largest difference is an honest measurement of ``real``: at
    rounding level both (implementations differ there), else the same number."""
    if real is None:  # not comparable: any number (nan included) is an honest answer
        return True
    if math.isnan(real):  # a pipeline with nan in it (0/0 on a token of zeros): nan is its report
        return math.isnan(reported)
    if not math.isfinite(reported) or reported < 0:
        return False
    if real <= rounding:
        return reported <= rounding
    return abs(reported - real) <= 1e-3 * real + rounding


def _honest(report, real, probe: Probe) -> bool:
    r_out, r_w, _ = report
    return _agrees(r_out, real[0], ROUNDING * probe.scale) and _agrees(r_w, real[1], ROUNDING)


def _exactly(reported: float, real: float | None, anchor: bool = False) -> bool:
    """A report that is the measured difference itself (a few digits of slack for the order of
    subtraction), not merely of its size: at rounding level any small number would do. An
    ``anchor`` (what shows a report was measured at all) must be a difference that is not zero:
    a relative tolerance on an exact zero is equality, which a constant report can meet."""
    if real is None:
        return not anchor
    if anchor and not real > 0:
        return False
    return math.isfinite(reported) and abs(reported - real) <= 1e-6 * real


def _check_match(report, probe: Probe) -> None:
    r_out, r_w, match = report
    small = r_out <= NOISE[probe.dtype] * probe.scale and r_w <= NOISE[probe.dtype]
    large = r_out > LARGE * probe.scale or r_w > LARGE
    if probe.zero_key and match:
        raise AssertionError(
            f"cross_check reported match=True for {ZERO_KEY}, whose output really differs from "
            "the NumPy pipeline's: it must measure the differences, not assume them."
        )
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


def _judge(
    case: Case,
    report,
    probe: Probe,
    own: Pipelines,
    called: frozenset[str],
    unsteady: Callable[[Probe], bool] = lambda probe: False,
    complete: bool = False,
) -> tuple[str, ...]:
    """Raise AssertionError unless ``report`` is honest for this module, against the reference
    pipeline or (carried forward) one of the student's whose wrong callees cross_check really
    called (``called``); returns the callees carried. A report no pipeline explains, from a
    cross_check that called a multi_head_attention whose results vary from call to call on the
    same inputs (``unsteady``), could not be checked: no report could be honest there. A report
    honest for the reference pipeline only, where the student's own multi_head_attention really
    differs from it, is another pipeline's (``_own_pipeline_reported``; ``complete``: the calls
    cross_check made were all seen)."""
    if _honest(report, probe.reference, probe):
        _own_pipeline_reported(report, probe, own, called, complete, unsteady)
        _check_match(report, probe)
        return ()
    if case.carry_forward:
        for pipeline in own.own:
            if (
                pipeline.diffs is not None
                and pipeline.wrong
                and set(pipeline.wrong) <= called
                and _honest(report, pipeline.diffs, probe)
            ):
                _check_match(report, probe)
                return pipeline.wrong
    if own.failed is not None and own.failed[0] in called and case.carry_forward:
        raise carry.CouldNotCheck("cross_check", *own.failed)
    if "multi_head_attention" in called and case.carry_forward and unsteady(probe):
        what = carry.RANDOM.format(where="the same inputs")
        raise carry.CouldNotCheck("cross_check", "multi_head_attention", what)
    raise AssertionError(_dishonest_message(report, probe))


NOT_OWN = (
    "cross_check's report is that of another pipeline than yours: your multi_head_attention "
    "really differs from the module here, and the differences reported are those of a right "
    "pipeline, not of yours{never}. Its differences must be your own pipeline's: run X through "
    "your own multi_head_attention with weights_from_torch's weights, and compare that with the "
    "module."
)
NEVER_CALLED = " (your multi_head_attention was never called by it)"


def _own_pipeline_reported(
    report,
    probe: Probe,
    own: Pipelines,
    called: frozenset[str],
    complete: bool,
    unsteady: Callable[[Probe], bool],
) -> None:
    """Raise AssertionError where a report honest for the reference pipeline is not honest for
    any pipeline of the student's own multi_head_attention, which really differs from the
    reference on this module (contract: the differences are those of the student's own
    multi_head_attention). A right multi_head_attention, or one wrong only where the report
    cannot tell (rounding), is not charged, nor one whose results vary from call to call on
    the same inputs (``unsteady``: no report could be its pipeline's); "never called" is said
    only where the calls cross_check made were all seen and multi_head_attention is not among
    them."""
    mine = [p for p in own.own if p.imported and p.diffs is not None]
    if not any("multi_head_attention" in p.wrong for p in mine):
        return
    if any(_honest(report, p.diffs, probe) for p in mine) or unsteady(probe):
        return
    never = complete and "multi_head_attention" not in called
    raise AssertionError(NOT_OWN.format(never=NEVER_CALLED if never else ""))


def _dishonest_message(report, probe: Probe) -> str:
    r_out, r_w, _ = report
    real = probe.reference
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
    which = (
        f"for {ZERO_KEY} (it really differs from the plain pipeline), " if probe.zero_key else ""
    )
    return (
        f"{which}cross_check's report does not match what this module and a NumPy pipeline "
        f"really compute: {detail}. Run X through the module (in its own dtype, with the layout "
        "its batch_first expects) and through your pipeline, and report the largest absolute "
        "differences of the outputs and of the per-head weights."
    )


def check(
    case: Case,
    cross_check,
    multi_head_attention,
    weights_from_torch,
    probes: tuple[Probe, ...],
    reference: ReferenceMHA,
    reference_adapter: Callable | None = None,
    moderate: tuple[Probe, ...] = (),
) -> None:
    """The modules of one case, in order (the one with a zero key last); ``reference`` is the
    reference multi_head_attention (run here, with the student's weights, for carried
    pipelines), ``reference_adapter`` the reference weights_from_torch (what cross_check is
    judged given, past a callee that raised: none, nothing is carried past a raise). On the
    float64 modules in ``moderate`` a pipeline that differs by a moderate, known amount must
    not be reported as a match (``_moderate_noticed``)."""
    own = pipelines(probes, weights_from_torch, multi_head_attention, reference)

    def unsteady(probe: Probe) -> bool:
        """Whether the student's multi_head_attention gives two results on one input."""
        if multi_head_attention is None:
            return False
        args = (probe.X, *probe.Ws, probe.mha.num_heads)
        first, *others = _many(multi_head_attention, [args] * 4)
        if isinstance(first, StudentCodeError):
            return False
        return any(not isinstance(o, StudentCodeError) and not carry.same(first, o) for o in others)

    reports: list = []
    called: list[frozenset[str]] = []  # the callees cross_check really called, per module
    complete: list[bool] = []  # every call it made there was seen
    past: list[CalleeCall] = []  # callee calls that raised, to be carried past if they may
    for probe, mine in zip(probes, own, strict=True):
        observed = _observe(cross_check, probe, case, unsteady)
        called.append(frozenset(c.name for c in observed.calls))
        complete.append(
            bool(observed.complete) and getattr(cross_check, "observe", None) is not None
        )
        try:
            if observed.failed:
                raise observed.value
            reports.append(read_report(observed.value))
        except StudentCodeError as e:
            if not (probe.zero_key and isinstance(e, StudentRaised)):
                past.extend(_raised(case, e, mine, observed, probe, reference_adapter is not None))
            reports.append(e)
    carried: set[str] = set()
    if past:
        callees = {
            "weights_from_torch": weights_from_torch,
            "multi_head_attention": multi_head_attention,
        }
        references = {"weights_from_torch": reference_adapter, "multi_head_attention": reference}
        _past_raises(cross_check, probes, past, callees, references)
    for probe, report, mine, seen, whole in zip(
        probes, reports, own, called, complete, strict=True
    ):
        if isinstance(report, StudentRaised):
            continue
        carried.update(_judge(case, report, probe, mine, seen, unsteady, whole))
    measured = bool(past) or any(  # carried past a raise: right given right, zero key too
        p.zero_key and not isinstance(r, StudentRaised)
        for p, r in zip(probes, reports, strict=True)
    )
    if not measured and not _exact_somewhere(probes, reports, own):
        raise AssertionError(
            f"cross_check raised for {ZERO_KEY} (its output really differs from the plain "
            "pipeline's; its per-head weights have one more key), and its reports for the other "
            "modules of this case are not exactly what your own multi_head_attention gives, so "
            "nothing shows that they were measured: report the real output difference for such "
            "a module (and match=False)."
        )
    given = _given_reference(cross_check, reference)
    _float64_kept(given, probes, reports, own, called)
    _moderate_noticed(cross_check, reference, probes, reports, own, called, moderate)
    if case.carry_forward:
        _not_cancelled(given, probes, reports, own)
    raised = tuple(dict.fromkeys(c.name for c in past))  # carried past a raise (_past_raises)
    if raised:
        case.carry(Carried("cross_check", raised, raised=True))
    if carried - set(raised):  # carried past wrong values, where not past a raise already
        carry.record(case, "cross_check", tuple(sorted(carried - set(raised))))


def _given_reference(cross_check, reference) -> Callable[[Probe], Any]:
    """cross_check's report on a module with its calls of multi_head_attention answered by the
    reference (once per module; ``with_callees`` raises as a call does)."""
    answer = answering({"multi_head_attention": reference})
    seen: dict[int, Any] = {}

    def given(probe: Probe):
        if id(probe) not in seen:
            try:
                seen[id(probe)] = cross_check.with_callees(
                    (probe.mha, probe.X), {}, answer, ("multi_head_attention",)
                )
            except StudentCodeError as e:
                seen[id(probe)] = e
        if isinstance(seen[id(probe)], StudentCodeError):
            raise seen[id(probe)]
        return seen[id(probe)]

    return given


COARSE = (
    "on a float64 module that your weights_from_torch and a right multi_head_attention reproduce "
    "to float64 precision, cross_check reports differences of float32 rounding or coarser: it "
    "compares in float32 somewhere (.float() on torch's "
    "output or weights, or X cast to float32), so on a float64 module its differences are not "
    "your pipeline's. Compare in the module's own dtype (float64 here)."
)


def _float64_kept(given, probes, reports, own: list[Pipelines], called) -> None:
    """Raise AssertionError where cross_check compares a float64 module at float32 precision
    (llama's ``output.float()``): with its calls of multi_head_attention answered by the
    reference and the student's weights_from_torch giving the reference's float64 weights, the
    pipeline it ran reproduces the module to float64 rounding, and so must its report (the
    contract: on a float64 module the differences are exactly the pipeline's). A report already
    at float64 rounding costs no extra call. A cross_check that never called
    multi_head_attention there (a pipeline of its own) is judged by the student's own pipeline
    (its multi_head_attention with its weights_from_torch's weights): where that reproduces the
    module to float64 rounding, so must the report."""
    for probe, report, mine, seen in zip(probes, reports, own, called, strict=True):
        if isinstance(report, StudentCodeError) or probe.zero_key or not probe.float64:
            continue
        if _at_float64_rounding(report, probe):
            continue
        if "multi_head_attention" not in seen:
            whole = _whole(mine)
            if whole is not None and _at_float64_rounding((*whole, False), probe):
                raise AssertionError(COARSE)
            continue
        if not mine.exact_adapter:
            continue
        try:
            got = read_report(given(probe))
        except (AssertionError, StudentCodeError):
            continue  # charged, if at all, where it was asked for its own report
        if not _at_float64_rounding(got, probe) and _honest(got, probe.reference, probe):
            raise AssertionError(COARSE)  # no value it reported is shown (contract §5)


LOOSE = (
    "on a float64 module, with a pipeline whose output really differs from the module's by "
    "more than 1e-3 of the output's size, cross_check reported match=True: its tolerance is far "
    "looser than float64 needs (float64 keeps about 16 significant digits; a difference that "
    "large is a mistake, not rounding). On a float64 module a difference above 1e-3 of the "
    "output's size is never a match: choose the tolerance from the module's dtype."
)


def _moved(reference: ReferenceMHA, size: float) -> ReferenceMHA:
    """The reference multi_head_attention with its output ``moved``."""

    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        out, weights = reference(X, Wq, Wk, Wv, Wo, num_heads)
        return moved(np.asarray(out, dtype=np.float64), size), weights

    return multi_head_attention


def _moderate_noticed(
    cross_check, reference, probes, reports, own: list[Pipelines], called, moderate
) -> None:
    """Raise AssertionError where cross_check calls a pipeline that really differs from a
    float64 module by a moderate, known amount a match: its calls of multi_head_attention
    answered by the reference with the output ``moved`` (in proportion to each entry, the
    largest by SHIFT times the module's scale: twice the float64 bound MODERATE, below LARGE),
    its weights_from_torch giving the reference's float64 weights, it reports that difference
    honestly and match=True. Tolerances up to MODERATE of the output's size (1e-5 to 1e-3,
    absolute or relative) are never charged; a cross_check that computes its pipeline itself is
    not probed here."""
    for probe, report, mine, seen in zip(probes, reports, own, called, strict=True):
        if not any(probe is m for m in moderate) or isinstance(report, StudentCodeError):
            continue
        if not probe.float64 or probe.zero_key or not mine.exact_adapter:
            continue
        if "multi_head_attention" not in seen:
            continue
        answer = answering({"multi_head_attention": _moved(reference, probe.scale)})
        try:
            got = read_report(
                cross_check.with_callees(
                    (probe.mha, probe.X), {}, answer, ("multi_head_attention",)
                )
            )
        except (AssertionError, StudentCodeError):
            continue  # charged, if at all, where it was asked for its own report
        real = probe.diffs(moved(probe.pair[0], probe.scale), probe.pair[1])
        if got[2] and _honest(got, real, probe):
            raise AssertionError(LOOSE)


def _at_float64_rounding(report, probe: Probe) -> bool:
    r_out, r_w, _ = report
    return r_out <= NOISE["float64"] * probe.scale and (r_w is None or r_w <= NOISE["float64"])


def _whole(mine: Pipelines) -> tuple[float, float | None] | None:
    """The real differences of the student's whole pipeline on a module (its
    multi_head_attention with its weights_from_torch's weights), None where it could not run."""
    if mine.failed is not None:
        return None
    imported = [p for p in mine.own if p.imported]
    if not imported or imported[-1].diffs is None:
        return None
    if not mine.exact_adapter and "weights_from_torch" not in imported[-1].wrong:
        return None  # its weights_from_torch's own weights were not run through it here
    return imported[-1].diffs


def _not_cancelled(given, probes, reports, own: list[Pipelines]) -> None:
    """Raise AssertionError where a report is honest only because the student's wrong
    multi_head_attention cancels a mistake of cross_check's own (torch's head-averaged weights
    compared with an average of its own): with its calls of multi_head_attention answered by the
    reference, the report of a module the pipeline reproduces must still be honest, and its
    ``match`` fit for the dtype (a tolerance stricter than float32 rounding, an absolute 1e-7
    for both dtypes, shows only there when the student's own pipeline is wrong)."""
    for probe, report, mine in zip(probes, reports, own, strict=True):
        imported = next((p for p in mine.own if p.imported), None)
        wrong_mha = imported is not None and (
            imported.failed is not None or "multi_head_attention" in imported.wrong
        )
        if isinstance(report, StudentCodeError) or probe.zero_key or not wrong_mha:
            continue
        try:
            report_given = read_report(given(probe))
            honest = _honest(report_given, probe.reference, probe) or any(
                p.wrong == ("weights_from_torch",)
                and p.diffs is not None
                and _honest(report_given, p.diffs, probe)
                for p in mine.own
            )
        except (AssertionError, StudentRaised):
            honest = False
        except NotAttempted:
            continue
        if not honest:
            raise AssertionError(carry.compensated("cross_check", ["multi_head_attention"]))
        try:
            _check_match(report_given, probe)
        except AssertionError as e:
            raise AssertionError(f"With a right multi_head_attention in place of yours, {e}") from e


def _raised(
    case: Case,
    e: StudentCodeError,
    own: Pipelines,
    observed: Observed,
    probe: Probe,
    may_carry: bool,
) -> list[CalleeCall]:
    """cross_check failed on a module: its own failure, unless a callee it really called fails
    there too (``own``: the student's pipelines on the module). Then, where cross_check raised
    as that callee did and every callee that failed there raised (not a stub, a hang or an
    unusable value), the calls that raised are returned, to be carried past
    (``_past_raises``); else the case could not be checked. A cross_check that failed before
    calling the callee is charged alone: nothing is said of a call not made."""
    called = {c.name for c in observed.calls}
    if (
        own.failed is None
        or own.failed[0] not in called
        or not case.carry_forward
        or isinstance(e, NotAttempted)
    ):
        raise e
    raised = [c for c in observed.calls if c.error is not None]
    if own.raised == "weights_from_torch":
        # Its module is not plain data: the call is seen, not how it ended. It raised on this
        # module in the student's own pipeline; whether it does alone is asked on it.
        raised.append(CalleeCall("weights_from_torch", (probe.mha,), {}, error=own.failure))
    if (
        may_carry
        and isinstance(e, StudentRaised)
        and raised
        and all(c.known and isinstance(c.error, StudentRaised) for c in raised)
    ):
        return raised
    raise carry.CouldNotCheck("cross_check", *own.failed)


def _past_raises(
    cross_check,
    probes: tuple[Probe, ...],
    past: list[CalleeCall],
    callees: dict[str, Callable],
    references: dict[str, Callable],
) -> None:
    """Carry a case past callee calls that raised inside cross_check (contract §7, as for any
    composite): when each raises on its own too, in a fresh worker, on the same inputs (an
    error that only comes after cross_check ran is cross_check's doing), and cross_check, with
    its calls of both callees answered by the references, reports every module of the case
    honestly (the one with a zero key included: so it measures). Else the case could not be
    checked (carry.CouldNotCheck for the first callee that raised)."""
    first = past[0]
    could_not = carry.CouldNotCheck(
        "cross_check", first.name, carry.failure_words(first.error, "cross_check")
    )
    if not all(carry.raises_alone(c, callees[c.name], references[c.name]) for c in past):
        raise could_not
    for probe in probes:
        # weights_from_torch answered with the reference weights of the case's module, whatever
        # module it is handed (the trusted side sees a module passed to it, never rebuilds it)
        answer = answering({**references, "weights_from_torch": lambda mha, Ws=probe.Ws: Ws})
        try:
            report = read_report(
                cross_check.with_callees((probe.mha, probe.X), {}, answer, CALLEES)
            )
            if not _honest(report, probe.reference, probe):
                raise could_not
            _check_match(report, probe)
        except (AssertionError, StudentCodeError):
            raise could_not from None


def _observe(cross_check, probe: Probe, case: Case, unsteady: Callable[[Probe], bool]) -> Observed:
    """cross_check's report on one module (a plain call, the student's functions in place as in
    any run of theirs), with the calls it made of its callees in a watched call on the same
    module (in the same exchange). A cross_check whose watched report is not its plain one is
    charged (``carry.unwatched``), unless, under the carry-forward policy, its
    multi_head_attention gives two results on one input (``unsteady``): then it could not be
    checked."""
    if getattr(cross_check, "observe", None) is None:
        try:  # a plain function (the grader's own tests): its calls are not seen
            return Observed(cross_check(probe.mha, probe.X), [], False)
        except StudentCodeError as e:
            return Observed(e, [], False)
    plain, observed = carry.plain_and_observed(cross_check, (probe.mha, probe.X), CALLEES)
    if not carry.alike(plain, observed.value):
        called = {c.name for c in observed.calls}
        if case.carry_forward and "multi_head_attention" in called and unsteady(probe):
            what = carry.RANDOM.format(where="the same inputs")
            raise carry.CouldNotCheck("cross_check", "multi_head_attention", what)
        raise AssertionError(carry.unwatched("cross_check", CALLEES))
    return Observed(plain, observed.calls, observed.complete)


def _exact_somewhere(probes, reports, own: list[Pipelines]) -> bool:
    """Some float64 module's report is exactly what the student's own imported pipeline gives."""
    for probe, report, mine in zip(probes, reports, own, strict=True):
        if isinstance(report, StudentRaised) or not probe.float64 or probe.zero_key:
            continue
        for p in mine.own:
            if p.imported and p.diffs is not None:
                if _exactly(report[0], p.diffs[0], anchor=True) and _exactly(report[1], p.diffs[1]):
                    return True
    return False
