"""distinct_head_pairs: which pairs are missing or extra, and why."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from .. import mutants as mut
from .. import probes as pr
from ..compare import Outcome
from ..explain import first_difference
from ..result import Diagnosis, named
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    qid = "distinct_head_pairs"
    probes = pr.distinct_probes()
    student = s.student(qid, probes)
    expected = trusted(("ref", qid), ref.distinct_head_pairs, probes)
    if all(same_pairs(got, e) for got, e in zip(student, expected, strict=True)):
        came = next((w for w in map(_container, student) if w is not None), None)
        if came is None:
            return None
        # the right pairs, in another container than a list of tuples
        found = s.in_function(qid, ("pairs-not-list-of-tuples",), inline=False)
        head, hint, tail = found.message.partition(" Hint: ")
        return named(found.misconceptions, qid, f"{head} Here it returned {came}.{hint}{tail}", qid)
    if s.not_attempted(student):
        return None
    for mid, fs in mut.DISTINCT.items():
        for f in fs:
            if all(
                same_pairs(got, e) for got, e in zip(student, trusted((f,), f, probes), strict=True)
            ):
                return s.in_function(qid, (mid,), inline=False)

    if _by_argmax(s, student, probes):  # pairs by each query's most-attended key, not entries
        return s.in_function(qid, ("pairs-argmax",), inline=False)

    fixed = _fixed_tolerance(student, probes)
    if fixed is not None:  # the same pairs whatever atol is: a tolerance of its own
        found = s.in_function(qid, ("pairs-ignores-atol",), inline=False)
        head, hint, tail = found.message.partition(" Hint: ")
        return named(found.misconceptions, qid, f"{head} {fixed}{hint}{tail}", qid)

    measure = _relative_measure(student, probes)
    if measure is not None:  # a relative difference compared with atol: the measure told
        found = s.in_function(qid, ("pairs-relative-tolerance",), inline=False)
        head, hint, tail = found.message.partition(" Hint: ")
        words = f"Here the pairs it lists are those whose {measure} is above atol."
        return named(found.misconceptions, qid, f"{head} {words}{hint}{tail}", qid)

    distance = _another_distance(student, probes)
    if distance is not None:  # a measure of its own against atol: which measure told
        found = s.in_function(qid, ("pairs-another-distance",), inline=False)
        head, hint, tail = found.message.partition(" Hint: ")
        words = (
            f"Here the pairs it lists are those whose {distance} is above atol (the first "
            "measure we tried that gives its pairs on our inputs)."
        )
        return named(found.misconceptions, qid, f"{head} {words}{hint}{tail}", qid)

    def describe(got, want, probe):
        try:
            got_set = {pair(p) for p in got}
        except Exception:
            return "did not return a list of (i, j) pairs of ints"
        extra, missing = got_set - set(want), set(want) - got_set
        notes = []
        if any(i >= j for i, j in got_set):
            notes.append("includes pairs with i >= j (list each pair once, i < j)")
        if extra:
            notes.append(f"lists {len(extra)} pair(s) of heads whose patterns agree within atol")
        if missing:
            notes.append(f"misses {len(missing)} pair(s) of heads that differ by more than atol")
        if not notes and [tuple(p) for p in got] != want:
            notes.append("lists the right pairs but not in lexicographic order")
        return "; ".join(notes)

    _, text = first_difference(student, expected, probes, describe)
    return s.plain(qid, f"Your distinct_head_pairs is not right: {text}.")


def _container(got: Outcome) -> str | None:
    """What came, in words, where a result is not a list of tuples; None where it is."""
    v = got.value
    if isinstance(v, list) and all(type(p) is tuple for p in v):
        return None
    if isinstance(v, np.ndarray):
        return f"a NumPy array of shape {v.shape} (dtype {v.dtype})"
    if isinstance(v, list):
        odd = next(p for p in v if type(p) is not tuple)
        inner = "NumPy arrays" if isinstance(odd, np.ndarray) else f"{type(odd).__name__}s"
        return f"a list of {inner}"
    return f"a {type(v).__name__}"


def pair(p) -> tuple[int, ...]:
    """A pair of head indices as plain ints; TypeError for anything that is not integers."""
    if not all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in p):
        raise TypeError("not a pair of ints")
    return tuple(int(x) for x in p)


def same_pairs(got: Outcome, e: Outcome) -> bool:
    if not got.ok:
        return False
    try:
        return [pair(p) for p in got.value] == e.value
    except Exception:
        return False


def _argmax_pairs(weights) -> list[tuple[int, int]]:
    top = np.argmax(np.asarray(weights, dtype=np.float64), axis=-1)
    h = len(top)
    return [(i, j) for i in range(h) for j in range(i + 1, h) if np.any(top[i] != top[j])]


def _argmax_probes() -> tuple:
    """Heads whose argmax agrees but whose entries are far apart (0 and 1), and heads whose
    entries are close but whose argmax differs (0 and 2), with a small atol and a large one:
    no tolerance on the entries lists the pairs that the argmax does."""
    from ..probes import Probe

    w = np.array(
        [
            [[0.40, 0.30, 0.20, 0.10], [0.10, 0.20, 0.30, 0.40]],
            [[0.70, 0.10, 0.10, 0.10], [0.05, 0.05, 0.10, 0.80]],
            [[0.35, 0.36, 0.19, 0.10], [0.10, 0.20, 0.30, 0.40]],
        ]
    )
    return (Probe((w,)), Probe((w,), {"atol": 0.5}))


def _by_argmax(s, student, probes) -> bool:
    """On every probe and on ``_argmax_probes``, the pairs listed are those of heads whose most
    attended key (the argmax of a row) differs for some query, whatever atol."""
    if not all(
        same_pairs(got, Outcome(value=_argmax_pairs(p.args[0])))
        for got, p in zip(student, probes, strict=True)
    ):
        return False
    extra = _argmax_probes()
    got = s.student("distinct_head_pairs", extra)
    return all(
        same_pairs(g, Outcome(value=_argmax_pairs(p.args[0])))
        for g, p in zip(got, extra, strict=True)
    )


def _fixed_tolerance(student, probes) -> str | None:
    """The words for a student whose pairs are, on every probe, the pairs that differ by more
    than one tolerance ``t`` of its own, the same ``t`` whatever atol the probe passed (and
    not that atol on some probe): None when no single ``t`` gives them all."""
    lo, hi = 0.0, math.inf  # the student's pairs are those with max |difference| > t, lo <= t < hi
    atols = []
    listed = omitted = False
    for probe, got in zip(probes, student, strict=True):
        if not got.ok:
            return None
        try:
            pairs = [pair(p) for p in got.value]
        except Exception:
            return None
        w = np.asarray(probe.args[0], dtype=np.float64)
        h = len(w)
        diffs = {
            (i, j): float(np.max(np.abs(w[i] - w[j]))) for i in range(h) for j in range(i + 1, h)
        }
        if set(pairs) - set(diffs) or pairs != sorted(set(pairs)):
            return None
        for p, d in diffs.items():
            if p in pairs:
                hi, listed = min(hi, d), True
            else:
                lo, omitted = max(lo, d), True
        atols.append(probe.kwargs.get("atol", 1e-6))
    if not listed or not omitted or not lo < hi or len(set(atols)) < 2:
        return None  # pairs of every head or none: no tolerance is seen
    if all(lo <= a < hi for a in atols):
        return None
    tens = [10.0**k for k in range(-12, 3) if lo <= 10.0**k < hi]
    if lo == 0.0 and hi <= 1e-12:
        fit = "0 (any difference at all)"
    elif tens:
        fit = f"{tens[-1]:g}" if len(tens) == 1 else f"anything from {tens[0]:g} to {tens[-1]:g}"
    else:
        fit = f"between {lo:.3g} and {hi:.3g}"
    said = " and with ".join(f"{a:g}" for a in sorted(set(atols)))
    return (
        f"Here, with atol {said}, its pairs are those that differ by more than one tolerance "
        f"of its own, the same for every atol: on our inputs {fit} fits."
    )


def _pairs_by(measure, rows: bool = False):
    """distinct_head_pairs with heads compared by ``measure(x, y) > atol`` (x, y two heads'
    weights; ``rows``: as (queries, keys) rows, whatever leading axes they have)."""

    def pairs(weights, atol=1e-6):
        w = np.asarray(weights, dtype=np.float64)
        if rows:
            w = w.reshape(len(w), -1, w.shape[-1])
        with np.errstate(all="ignore"):
            return [
                (i, j)
                for i in range(len(w))
                for j in range(i + 1, len(w))
                if measure(w[i], w[j]) > atol
            ]

    return pairs


def _relative_measure(student, probes) -> str | None:
    """The words for pairs that are, on every probe, those whose relative difference (one of
    ``mut.RELATIVE``'s measures, x and y two heads' weights) is above atol; None otherwise."""
    for kind, (words, measure) in mut.RELATIVE.items():
        want = trusted(("relative pairs", kind), _pairs_by(measure), probes)
        if all(same_pairs(got, e) for got, e in zip(student, want, strict=True)):
            return words.replace("the largest difference", "largest difference of the two heads")
    return None


def _smooth(x: np.ndarray, e: float) -> np.ndarray:
    return (1.0 - e) * x + e / x.shape[-1]


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.sum(p * np.log(p / q), axis=-1)


def _js(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    m = (p + q) / 2
    return (_kl(p, m) + _kl(q, m)) / 2


def _rows(f):
    """A measure of two heads' rows (one value per query) as (sum over the queries, mean)."""
    return (
        ("summed over the queries", lambda x, y: float(np.sum(f(x, y)))),
        ("averaged over the queries", lambda x, y: float(np.mean(f(x, y)))),
        ("largest over the queries", lambda x, y: float(np.max(f(x, y)))),
    )


def _distances():
    """Measures of how far apart two heads' weights are: (words, measure)."""
    found = []
    for e in (0.0, 1e-3, 1e-4):
        smooth = f" (each map smoothed as {1 - e:g} w + {e:g} / n first)" if e else ""
        for name, f in (
            ("Jensen-Shannon divergence", _js),
            ("KL divergence", _kl),
            ("symmetric KL divergence", lambda p, q: _kl(p, q) + _kl(q, p)),
        ):
            for how, m in _rows(f):
                found.append(
                    (
                        f"{name} {how}{smooth}",
                        lambda x, y, m=m, e=e: m(_smooth(x, e), _smooth(y, e)),
                    )
                )
    d = lambda x, y: (x - y).reshape(-1)  # noqa: E731
    found += [
        ("L2 norm of the difference (Frobenius)", lambda x, y: float(np.linalg.norm(d(x, y)))),
        ("squared L2 norm of the difference", lambda x, y: float(np.sum(d(x, y) ** 2))),
        ("sum of absolute differences (L1)", lambda x, y: float(np.sum(np.abs(d(x, y))))),
        ("mean absolute difference", lambda x, y: float(np.mean(np.abs(d(x, y))))),
        ("root mean square difference", lambda x, y: float(np.sqrt(np.mean(d(x, y) ** 2)))),
        ("mean squared difference", lambda x, y: float(np.mean(d(x, y) ** 2))),
        ("absolute difference of the sums", lambda x, y: float(abs(np.sum(x) - np.sum(y)))),
        ("absolute difference of the means", lambda x, y: float(abs(np.mean(x) - np.mean(y)))),
        (
            "largest row L1 distance (total variation times 2)",
            lambda x, y: float(np.max(np.sum(np.abs(x - y), axis=-1))),
        ),
        (
            "cosine distance of the flattened maps",
            lambda x, y: float(
                1 - np.dot(x.ravel(), y.ravel()) / (np.linalg.norm(x) * np.linalg.norm(y))
            ),
        ),
    ]
    return found


def _another_distance(student, probes) -> str | None:
    """The words for pairs that are, on every probe, those whose distance by another measure
    than the largest entry difference (a divergence, a norm, a mean; ``_distances``) is above
    atol; None where no measure gives them."""
    for k, (words, measure) in enumerate(_distances()):
        want = trusted(("another distance", k), _pairs_by(measure, rows=True), probes)
        if all(same_pairs(got, e) for got, e in zip(student, want, strict=True)):
            return words
    return None
