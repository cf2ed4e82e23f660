"""cross_check: right given right callees where it called wrong ones (blame those it called), a
catalogued mistake (averaged weights, the layout, said precisely, a tolerance too strict for
float32, tensors taken to NumPy without detaching), else what the report got wrong."""

from __future__ import annotations

import itertools
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from ... import errors
from .. import mutants as mut
from .. import probes as pr
from ..catalogue import CATALOGUE
from ..compare import Outcome, run
from ..explain import error_text
from ..moderate import moved
from ..result import Diagnosis, named
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


CALLEES = ("weights_from_torch", "multi_head_attention")


def references() -> dict:
    """The reference callees (the adapter imports torch: when first diagnosed, not before)."""
    from solutions import crosscheck as ref_cc

    return {
        "weights_from_torch": ref_cc.weights_from_torch,
        "multi_head_attention": ref.multi_head_attention,
    }


def check(over=None, **kw):
    p = {**references(), **(over or {})}
    return partial(
        mut.cross_check_with,
        weights_from_torch=p["weights_from_torch"],
        multi_head_attention=p["multi_head_attention"],
        **kw,
    )


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "cross_check"
    probes = pr.crosscheck_probes()
    student = s.student(qid, probes)
    if s.not_attempted(student):
        return None
    plain = _not_plain_values(s, qid, student)
    if plain is not None:
        return plain
    expected = trusted(("ref", qid), check(), probes)
    right = same_report(student, expected, probes) is True
    suspects = [n for n in CALLEES if s.wrong(n)]
    if right and not suspects:
        found = _relative_named(s, qid, probes, None, right, [])
        if found is None:
            found = _loose_named(s, qid, probes, None, right, [])
        if found is None and _masked_given_right(s, qid, probes, expected):
            # its report was right only beside a multi_head_attention that masks as it does
            return s.in_function(qid, ("adapter-masked-module-call",), inline=False)
        return found
    # What it did with its callees, as recorded: its calls of multi_head_attention answered by
    # the reference; a module does not travel to be answered, so where it called a wrong
    # weights_from_torch, our pipeline takes the student's weights_from_torch too.
    made = s.calls_made(qid, probes, references(), answerable=("multi_head_attention",))
    given, wrong, base = made.given, list(made.wrong), None
    if "weights_from_torch" in wrong:
        base = {"weights_from_torch": s.fn("weights_from_torch")}
    pipeline = expected if base is None else run(check(base), probes)
    verdict = same_report(given, pipeline, probes)
    strict = verdict == "strict"
    if "multi_head_attention" not in made.called or _loosely(given, student):
        # its report does not follow what multi_head_attention gives it
        found = _not_own_pipeline(s, qid, probes, student, pipeline, base, made.called)
        if found is not None:
            return found
    if verdict is True or (all(not o.ok for o in given) and all(not o.ok for o in pipeline)):
        found = _loose_named(s, qid, probes, base, right, wrong) if verdict is True else None
        if found is not None:  # right given its callees, but a float64 tolerance far too loose
            return found
        if right or not wrong:
            return None  # right given its callees: differs from ours by rounding only
        return s.blame_callees(qid, tuple(wrong))
    if no_detach(student):
        return s.in_function(qid, ("adapter-no-detach",), inline=False)
    for mid, variants in mut.CROSS_CHECK.items():
        for kw in variants:
            if kw.get("grad"):
                continue  # raises on every module: told by what it raises (no_detach)
            if base is None:
                cand = trusted((mid, tuple(sorted(kw.items()))), check(**kw), probes)
            else:
                cand = run(check(base, **kw), probes)
            if same_report(given, cand, probes) is True:
                if right and wrong:
                    found = s.compensated(qid, (mid,), wrong)
                elif wrong:
                    found = s.with_callees(qid, (mid,), wrong)
                else:
                    found = s.in_function(qid, (mid,), inline=False)
                return _layout(found, kw.get("layout"))
    # two of the table's mistakes at once (DETR's sequence-first layout with torch's default,
    # head-averaged weights): both named, each as its own entry says it
    singles = [
        (mid, kw)
        for mid, variants in mut.CROSS_CHECK.items()
        for kw in variants
        if not kw.get("grad")
    ]
    for (m1, kw1), (m2, kw2) in itertools.combinations(singles, 2):
        if m1 == m2 or set(kw1) & set(kw2):
            continue
        kw = {**kw1, **kw2}
        if base is None:
            cand = trusted((m1, m2, tuple(sorted(kw.items()))), check(**kw), probes)
        else:
            cand = run(check(base, **kw), probes)
        if same_report(given, cand, probes) is True:
            ids = tuple(i for i in CATALOGUE if i in (m1, m2))
            if right and wrong:
                found = s.compensated(qid, ids, wrong)
            elif wrong:
                found = s.with_callees(qid, ids, wrong)
            else:
                found = s.in_function(qid, ids, inline=False)
            return _layout(found, kw.get("layout"))
    if "multi_head_attention" not in made.called:
        found = _inline(s, given, probes, base, made.called)
        if found is not None:
            return found
    found = _relative_named(s, qid, probes, base, right, wrong)
    if found is None:
        found = _loose_named(s, qid, probes, base, right, wrong)
    if found is not None:
        return found
    if strict or same_report(student, expected, probes) == "strict":
        return s.in_function(qid, ("adapter-strict-tolerance",), inline=False)
    if all(not o.ok for o in student):
        return s.raised(qid, student, probes, made.called)
    _, text = report_difference(student, expected, probes)
    return s.plain(qid, f"Your cross_check {text}.")


MASKED = "adapter-masked-module-call"


def _masked_given_right(s: DiagnosisSession, qid: str, probes, expected) -> bool:
    """adapter-masked-module-call where its own reports look right: with its calls of
    multi_head_attention answered by the reference, its reports are those of a module called
    with a mask of its own (a multi_head_attention of the student's that masks the same
    inputs, all-zero tokens, made the masked module look matched)."""
    made = s.calls_made(qid, probes, references(), answerable=("multi_head_attention",))
    if "multi_head_attention" not in made.called:
        return False
    if same_report(made.given, expected, probes) is True:
        return False
    for kw in mut.CROSS_CHECK[MASKED]:
        cand = trusted((MASKED, tuple(sorted(kw.items()))), check(**kw), probes)
        if same_report(made.given, cand, probes) is True:
            return True
    return False


def _not_plain_values(s: DiagnosisSession, qid: str, student: list[Outcome]):
    """report-not-plain-floats: every call that failed returned a report whose values are not
    plain data (a torch tensor where a float or a bool belongs), as the grader's own words for
    it say (``grading.replies.not_plain_data``: a report key is named only when it is one of
    the contract's), and no call did anything else. What came and what was expected are told;
    no mistake of the pipeline is named, none having been seen."""
    failed = [o.error for o in student if not o.ok]
    if not failed or not all(isinstance(e, errors.BadResult) for e in failed):
        return None
    if not all(any(f"'{k}'" in str(e) for k in REPORT_KEYS) for e in failed):
        return None
    found = s.in_function(qid, ("report-not-plain-floats",), inline=False)
    did = CATALOGUE["report-not-plain-floats"].did
    seen = f" Here it {failed[0]}."
    return named(found.misconceptions, found.blame, found.message.replace(did, did + seen, 1), qid)


def _loosely(a: list[Outcome], b: list[Outcome]) -> bool:
    """Two lists of reports alike to float32 rounding (differences both below 1e-4, or within
    1e-3 of each other), every call of both giving a report."""
    for x, y in zip(a, b, strict=True):
        if not (x.ok and y.ok and isinstance(x.value, dict) and isinstance(y.value, dict)):
            return False
        for key in REPORT_KEYS[:2]:
            try:
                if not _close(float(x.value[key]), float(y.value[key]), "float32"):
                    return False
            except (KeyError, TypeError, ValueError):
                return False
    return True


def _not_own_pipeline(s: DiagnosisSession, qid: str, probes, student, pipeline, base, called):
    """report-not-own-pipeline: the student's multi_head_attention really differs from the
    module on our probes (its pipeline's report is not a right pipeline's), and cross_check's
    reports are a right pipeline's (to float32 rounding), not its own. That it never called
    multi_head_attention is said only where its calls, recorded, show it."""
    if not s.wrong("multi_head_attention") or not _loosely(student, pipeline):
        return None
    over = {**(base or {}), "multi_head_attention": s.fn("multi_head_attention")}
    own = run(check(over), probes)
    if not all(o.ok for o in own) or _loosely(own, pipeline) or _loosely(student, own):
        return None
    found = s.in_function(qid, ("report-not-own-pipeline",), inline=False)
    if "multi_head_attention" in called:
        return found
    did = CATALOGUE["report-not-own-pipeline"].did
    seen = " Here it never called your multi_head_attention."
    return named(found.misconceptions, found.blame, found.message.replace(did, did + seen, 1), qid)


REPORT_KEYS = ("output_max_abs_diff", "weights_max_abs_diff", "match")


def _inline(s: DiagnosisSession, given, probes, base, called) -> Diagnosis | None:
    """A cross_check that computes the multi-head attention in its own code (it never called
    the student's multi_head_attention) and reports what a pipeline with one catalogued
    mistake reports: that mistake, named as multi_head_attention's diagnosis would name it,
    in words that say where it was made."""
    from .multi_head_attention import candidates

    for ids, callee, key, pipeline in candidates():
        if (len(ids) > 1 and callee is None) or ids[0] in SAME_VALUES:
            continue  # two mistakes of the table at once: left to multi_head_attention
        over = {**(base or {}), "multi_head_attention": pipeline}
        if base is None:
            cand = trusted(("cross_check inline", *key), check(over), probes)
        else:
            cand = run(check(over), probes)
        if same_report(given, cand, probes) is True:
            return s.in_function(
                "cross_check", ids, inline=True, called=called, callee="multi_head_attention"
            )
    return None


def _skewed(X, Wq, Wk, Wv, Wo, num_heads):
    """A pipeline that really differs from torch's module (its output moved and scaled, its
    weights rolled along the keys, still rows of probabilities): what a report measures."""
    out, weights = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)
    return out * 1.5 + 0.25, np.roll(weights, 1, axis=-1)


def _relative(s: DiagnosisSession, qid: str, probes, base) -> str | None:
    """How the reported differences are a relative error (``mut.RELATIVE``): with its calls of
    multi_head_attention answered by a pipeline that really differs from the module, what it
    reports is not the largest absolute differences but one of these measures of them. None
    where it never called multi_head_attention or no measure fits."""
    answered = _answered_by(s, qid, probes, base, _skewed)
    if answered is None:
        return None
    given, over = answered
    if same_report(given, run(check(over), probes), probes) is True:
        return None  # the absolute differences: no relative error
    for kind, (words, _) in mut.RELATIVE.items():
        if same_report(given, run(check(over, relative=kind), probes), probes) is True:
            return words
    return None


def _answered_by(s: DiagnosisSession, qid: str, probes, base, pipeline):
    """(cross_check's results with its calls of multi_head_attention answered by ``pipeline``,
    the callees the grader's own cross_check is given to compare: ``base``'s with ``pipeline``
    as multi_head_attention); None where it never called multi_head_attention."""
    made = s.calls_made(
        qid,
        probes,
        references(),
        answerable=("multi_head_attention",),
        answers={**references(), "multi_head_attention": pipeline},
    )
    if "multi_head_attention" not in made.answered:
        return None
    return made.given, {**(base or {}), "multi_head_attention": pipeline}


def _relative_named(s: DiagnosisSession, qid: str, probes, base, right, wrong):
    """report-relative-difference with the measure seen, or None."""
    relative = _relative(s, qid, probes, base)
    if relative is None:
        return None
    text = (
        " Here, given a pipeline that really differs from the module, what it reports fits "
        f"{relative}, on every module we tried."
    )
    return _named_seen(s, qid, "report-relative-difference", text, right, wrong)


def _named_seen(s: DiagnosisSession, qid: str, mid: str, seen: str, right, wrong):
    """``mid`` named where the mistake sits (cross_check alone, beside wrong callees, or
    cancelling them), what was seen told after what it did."""
    if right and wrong:
        found = s.compensated(qid, (mid,), wrong)
    elif wrong:
        found = s.with_callees(qid, (mid,), wrong)
    else:
        found = s.in_function(qid, (mid,), inline=False)
    did = CATALOGUE[mid].did
    return named(found.misconceptions, found.blame, found.message.replace(did, did + seen, 1), qid)


def _shifted(X, Wq, Wk, Wv, Wo, num_heads):
    """The reference pipeline with its output moved in proportion to each entry, the largest by
    SHIFT times its size (at least 1), as grading's (diagnose.moderate.moved)."""
    out, weights = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)
    return moved(out, max(1.0, float(np.max(np.abs(out))))), weights


def _loose(s: DiagnosisSession, qid: str, probes, base) -> str | None:
    """The words for a report of match=True on a float64 module whose pipeline (its calls of
    multi_head_attention answered by the reference moved by a moderate amount, 2e-3 of the
    output's size, as grading's) really differs from it by that amount, the difference reported
    as it is; None where it never called multi_head_attention, or calls it no match."""
    answered = _answered_by(s, qid, probes, base, _shifted)
    if answered is None:
        return None
    given, over = answered
    want = run(check(over), probes)
    seen = []
    for got, c, p in zip(given, want, probes, strict=True):
        dtype = str(p.args[0].in_proj_weight.dtype).removeprefix("torch.")
        if dtype != "float64" or not got.ok or not c.ok or not isinstance(got.value, dict):
            continue
        r, diff = got.value, c.value["output_max_abs_diff"]
        try:
            reported = float(r["output_max_abs_diff"])
        except (KeyError, TypeError, ValueError):
            return None
        if not _close(reported, diff, dtype) or r.get("match") is not True:
            continue
        seen.append(diff)
    if not seen:
        return None
    return (
        " Here, given a pipeline whose output differs from a float64 module's by up to "
        f"{min(seen):.2g} (2e-3 of the output's size), it reports that difference and "
        "match=True."
    )


def _loose_named(s: DiagnosisSession, qid: str, probes, base, right, wrong):
    """adapter-loose-tolerance with the difference it called a match, or None."""
    loose = _loose(s, qid, probes, base)
    if loose is None:
        return None
    return _named_seen(s, qid, "adapter-loose-tolerance", loose, right, wrong)


# multi_head_attention's mistakes that give the reference's values (a missing ValueError).
SAME_VALUES = ("mha-no-valueerror",)


LAYOUTS = {
    "batch": "Here it always puts the batch axis first, as batch_first=True asks, so a module "
    "with batch_first=False sees n sequences of one token.",
    "seq": "Here it always puts the batch axis second, as batch_first=False asks, so a module "
    "with batch_first=True sees n sequences of one token.",
    "swapped": "Here it reads batch_first the wrong way round, so modules of both layouts see n "
    "sequences of one token each.",
}


def _layout(found: Diagnosis, layout: str | None) -> Diagnosis:
    """adapter-batch-first, said precisely: which layouts the student's cross_check gets wrong."""
    if layout not in LAYOUTS:
        return found
    general = CATALOGUE["adapter-batch-first"].message
    text = found.message.replace(general, f"{general} {LAYOUTS[layout]}", 1)
    return named(found.misconceptions, found.blame, text, found.question)


def no_detach(student: list[Outcome]) -> bool:
    """Every call raised torch's RuntimeError for a tensor that still requires grad."""
    return all(
        isinstance(o.error, errors.StudentRaised)
        and o.error.is_a(RuntimeError)
        and "requires grad" in o.error.message
        for o in student
    )


def _close(a, b, dtype: str) -> bool:
    """Two reported differences agree: equal, or both at rounding level for the dtype."""
    tiny = 1e-4 if dtype == "float32" else 1e-9
    if a <= tiny and b <= tiny:
        return True
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))


def same_report(student: list[Outcome], candidate: list[Outcome], probes):
    """True: the student's reports are the candidate's, with a fitting ``match``; "strict":
    the same, except float32 modules called mismatched for rounding; None otherwise."""
    strict = False
    for got, c, p in zip(student, candidate, probes, strict=True):
        if got.ok != c.ok:
            return None
        if not got.ok and not isinstance(got.error, errors.StudentRaised):
            return None  # no report (not plain data, a hang, a crash): no pipeline explains it
        if not got.ok:
            continue
        r = got.value
        keys = ("output_max_abs_diff", "weights_max_abs_diff", "match")
        if not isinstance(r, dict) or any(k not in r for k in keys):
            return None
        dtype = str(p.args[0].in_proj_weight.dtype).removeprefix("torch.")
        try:
            reported = [float(r["output_max_abs_diff"]), float(r["weights_max_abs_diff"])]
        except (TypeError, ValueError):
            return None
        want = [c.value["output_max_abs_diff"], c.value["weights_max_abs_diff"]]
        if not all(_close(g, w, dtype) for g, w in zip(reported, want, strict=True)):
            return None
        worst = max(want)
        if worst <= 1e-10 and not r["match"]:
            return None  # equal to float64 rounding, yet called a mismatch
        if worst > 1e-3 and r["match"]:
            return None  # clearly different, yet called a match
        if 1e-10 < worst <= 1e-4 and not r["match"] and dtype == "float32":
            strict = True  # float32 rounding called a mismatch
    return "strict" if strict else True


def report_difference(student: list[Outcome], expected: list[Outcome], probes):
    for i, (got, e, p) in enumerate(zip(student, expected, probes, strict=True)):
        where = f"for the diagnosis' own input {p.describe()} (not this case's)"
        if not got.ok:
            return i, f"{where}: {error_text(got.error)}"
        r = got.value
        if not isinstance(r, dict) or any(
            k not in r for k in ("output_max_abs_diff", "weights_max_abs_diff", "match")
        ):
            return i, (
                "did not return a dict with output_max_abs_diff, weights_max_abs_diff and match "
                + where
            )
        if same_report([got], [e], [p]) is not True:
            return i, (
                f"reports differences (or a match) {where} other than what running the module "
                "and your own pipeline gives"
            )
    return -1, "differs from the reference"
