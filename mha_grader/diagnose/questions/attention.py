"""attention: right given a right softmax where it called the student's wrong one (blame
softmax), a catalogued mistake of its own read from its results given a right softmax (one
written inline, two at once; with the student's wrong softmax named too, or charged where the
two cancel), else what is off. A mistake that fits one rank of input says which ranks it got
right. What it does with its softmax is what the worker recorded (``calls_made``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from solutions import multihead as ref

from ... import errors
from .. import fitted, properties
from .. import mutants as mut
from .. import probes as pr
from ..catalogue import CATALOGUE
from ..compare import Outcome, as_array, matches, same
from ..explain import array_diff, first_difference
from ..result import Diagnosis, named
from ..trusted import trusted

if TYPE_CHECKING:
    from ..session import DiagnosisSession


def diagnose(s: DiagnosisSession) -> Diagnosis | None:
    probes = pr.attention_probes()
    student = s.student("attention", probes)
    expected = trusted(("ref", "attention"), mut.attention_ref, probes)
    if s.not_attempted(student):
        return None
    right = matches(student, expected)
    if right and not s.wrong("softmax"):
        return None
    # What it did with its softmax: a blame on the student's softmax rests on calls that
    # happened, and its own mistakes are read from its results with a right softmax.
    made = s.calls_made("attention", probes, {"softmax": ref.softmax})
    given, wrong = made.given, list(made.wrong)
    if matches(given, expected):
        if right:
            return None
        if wrong:
            return s.blame_callees("attention", tuple(wrong))
    else:
        if s.unsteady("attention", probes):  # random with a right softmax: its own dropout
            if wrong:
                return s.with_callees("attention", ("attention-dropout",), wrong)
            return s.in_function("attention", ("attention-dropout",), inline=False)
        found = _own(s, given, probes)
        if found is None and fitted.capped(given, probes, mut.capped):
            found = ("attention-logit-softcap",), mut.attention_ref, False
        # a distribution per query in the scores' order, the lowest-scoring keys given 0 (before
        # the masks by position: which keys are cut follows the scores, not the positions)
        sparse = None if found is not None else _sparse_fit(given, probes)
        if sparse is not None:
            found = ("attention-sparse-weights",), mut.attention_ref, False
        fit = None if found is not None else _scores_fit(given, probes)
        if fit is not None:  # any other scale, any mask: the classes beyond their examples
            found = fit_ids(fit), mut.attention_ref, False
        layout = None if found is not None else _layout(given, probes)
        if layout is not None:  # an operand taken in another layout: the product it computed
            found = ("attention-operand-layout",), layout[0], False
        if sparse is not None:
            layout = (None, sparse, "attention-sparse-weights")
        moved = None if found is not None else _weights_layout(given, expected, probes)
        if moved is not None:  # the right weights returned with their axes in another order
            found = ("attention-weights-layout",), mut.attention_ref, False
            layout = (None, moved, "attention-weights-layout")
        cosine = None if found is not None else _cosine_fit(given, probes)
        if cosine is not None:  # a softmax of the queries' and keys' cosines times a factor
            found = ("attention-cosine-scores",), mut.attention_ref, False
            layout = (None, cosine, "attention-cosine-scores")
        rows = None if found is not None else _rows_rescaled(given, probes)
        if rows is not None:  # the right weights times a factor per row: rows not summing to 1
            found = ("attention-rows-not-normalised",), mut.attention_ref, False
            layout = (None, rows, "attention-rows-not-normalised")
        kernel = None if found is not None else _kernel_fit(given, probes)
        if kernel is not None:  # weights from a kernel normalised per query: no softmax at all
            found = ("attention-not-softmax",), mut.attention_ref, False
            layout = (None, kernel, "attention-not-softmax")
        other = None if found is not None else _not_dot_product(s, given, probes)
        if other is not None:  # a distribution per query, but not by the dot products alone
            found = ("attention-scores-not-dot-product",), mut.attention_ref, False
            layout = (None, other, "attention-scores-not-dot-product")
        lower = None if found is not None else _lower_precision(given, expected, probes)
        if lower is not None:  # right to a lower precision's rounding only
            found = ("attention-lower-precision",), mut.attention_ref, False
            layout = (None, lower, "attention-lower-precision")
        if found is None:
            refused = _refused_ranks(given, expected, probes)
            if refused is not None:
                return _refuses(s, refused, wrong, made.called)
            bound = _width_bound(s, given, expected, probes)
            if bound is not None:
                return _bound(s, bound, wrong, made.called)
            if wrong:  # with its own softmax: right where it does not raise (it makes up for it)
                bound = _width_bound(s, student, expected, probes, own=True)
                if bound is not None:
                    return _bound(s, bound, wrong, made.called, own=True)
        if found is not None:
            ids, mutant, inline = found
            if right and wrong:
                found = s.compensated("attention", ids, wrong)
                return _said(with_fit(found, fit, probes), layout)
            if wrong:
                found = s.with_callees("attention", ids, wrong)
                return _said(with_fit(_with_ranks(s, found, given, mutant), fit, probes), layout)
            found = s.in_function("attention", ids, inline=inline, called=made.called)
            return _said(with_fit(_with_ranks(s, found, given, mutant), fit, probes), layout)
    if all(not o.ok for o in student):
        return s.raised("attention", student, probes, made.called)

    def describe(got, want, probe):
        if not isinstance(got, tuple | list) or len(got) != 2:
            return "did not return a pair (out, weights)"
        parts = []
        for label, g, w in (("out", got[0], want[0]), ("weights", got[1], want[1])):
            if not same(g, w):
                names = ("head", "query", "key" if label == "weights" else "feature")
                parts.append(f"{label}: {array_diff(g, w, names)}")
        return "; ".join(parts + _properties(s, got, want, probe))

    _, text = first_difference(student, expected, probes, describe)
    return s.plain("attention", f"Your attention differs from the reference: {text}.")


def _scores_fit(given, probes) -> fitted.ScoreFit | None:
    """``given`` as the softmax of the right scores by another factor, some keys masked."""
    scores = [
        Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) for Q, K, _ in (p.args for p in probes)
    ]
    return fitted.scores_fit(given, scores, lambda i, w: (w @ probes[i].args[2], w))


def _t(x):
    return np.swapaxes(x, -1, -2)


# The operands attention may take in another layout: (name, how it is made from Q, K, V).
_LEFT = (("Q", lambda Q, K: Q), ("Qᵀ", lambda Q, K: _t(Q)), ("K", lambda Q, K: K))
_LEFT += (("Kᵀ", lambda Q, K: _t(K)),)
_RIGHT = (("Kᵀ", lambda Q, K: _t(K)), ("K", lambda Q, K: K), ("Q", lambda Q, K: Q))
_RIGHT += (("Qᵀ", lambda Q, K: _t(Q)),)
_VALUES = (("V", lambda V: V), ("Vᵀ", lambda V: _t(V)))
# the right one, and those the catalogue names by their own ids (scores-kq, transpose-v)
_NAMED = {("Q", "Kᵀ", "V"), ("K", "Qᵀ", "V"), ("Q", "Kᵀ", "Vᵀ")}


def _layout_candidate(left, right, values):
    def attention(Q, K, V):
        scores = left[1](Q, K) @ right[1](Q, K) / math.sqrt(Q.shape[-1])
        weights = ref.softmax(scores, axis=-1)
        return weights @ values[1](V), weights

    attention.__name__ = attention.__qualname__ = f"_layout_{left[0]}{right[0]}{values[0]}"
    return attention


def _layout(given, probes) -> tuple[Callable, str] | None:
    """``given`` as attention with its operands in another layout: the scores as a product of
    Q, K or their transposes other than Q Kᵀ (K taken as already transposed: Q @ K), or
    weights times Vᵀ, raising where that product's shapes do not fit (the probes with square
    keys are where it runs). (the candidate, the words of the product), or None."""
    for left, right, values in itertools.product(_LEFT, _RIGHT, _VALUES):
        key = (left[0], right[0], values[0])
        if key in _NAMED:
            continue
        f = _layout_candidate(left, right, values)
        if matches(given, trusted(("layout", key), f, probes)):
            product = f"{left[0]} {right[0]}"
            if key[:2] == ("Q", "K"):
                product = "Q @ K, the K it was given used as if it were Kᵀ already"
            words = f" Here it computes the scores as {product}"
            if values[0] == "Vᵀ":
                words += " and the output as weights times Vᵀ"
            words += (
                ", instead of Q Kᵀ and weights times V: on our inputs it runs only where the "
                "shapes are square, and raises elsewhere."
            )
            return f, words
    return None


def _said(found: Diagnosis, layout) -> Diagnosis:
    """``found`` with the product ``layout`` computed (or the layout its weights were returned
    in) said after its id's message."""
    if layout is None:
        return found
    did = CATALOGUE[layout[2] if len(layout) > 2 else "attention-operand-layout"].did
    message = found.message.replace(did, did + layout[1], 1)
    roots = tuple((fn, message if t == found.message else t) for fn, t in found.roots)
    return named(found.misconceptions, found.blame, message, found.question, roots)


def _round_to(a: np.ndarray, precision: str) -> np.ndarray:
    """``a`` rounded to float16 or bfloat16 (float32 with 8 significant bits), as float64."""
    a = np.asarray(a, dtype=np.float64)
    if precision == "float16":
        with np.errstate(over="ignore"):
            return a.astype(np.float16).astype(np.float64)
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _attention_in(precision: str) -> Callable:
    """Attention with its operands and products rounded to ``precision`` (the softmax in
    float64): what computing the two products in that precision gives, to its rounding."""

    def attention(Q, K, V):
        r = partial(_round_to, precision=precision)
        scores = r(r(Q) @ np.swapaxes(r(K), -1, -2)) / math.sqrt(np.shape(Q)[-1])
        weights = ref.softmax(scores, axis=-1)
        return r(r(weights) @ r(V)), r(weights)

    return attention


def _relative_error(got, want) -> float | None:
    """The largest difference of (out, weights) from the right ones, relative to each one's
    largest entry; None for results that are not two finite arrays of the right shapes."""
    if not isinstance(got, tuple | list) or len(got) != 2:
        return None
    worst = 0.0
    for g, w in zip(got, want, strict=True):
        g, w = as_array(g), np.asarray(w, dtype=np.float64)
        if g is None or g.shape != w.shape or not np.isfinite(g).all():
            return None
        scale = max(float(np.abs(w).max(initial=0.0)), 1e-12)
        worst = max(worst, float(np.abs(g.astype(np.float64) - w).max(initial=0.0)) / scale)
    return worst


def _lower_precision(given, expected, probes) -> str | None:
    """The words for results that differ from the right ones, on every probe, by about what
    computing the products in float16 or bfloat16 gives (within a factor of 8 of that
    rounding's size on each probe, above float32's on some), and by no more than 2% anywhere:
    the precision fitted is told. None where neither fits."""
    errs = []
    for g, e in zip(given, expected, strict=True):
        err = _relative_error(g.value, e.value) if g.ok and e.ok else None
        if err is None:
            return None
        errs.append(err)
    if max(errs) <= 1e-5 or max(errs) > 2e-2:
        return None
    for precision in ("float16", "bfloat16"):
        made = trusted(("attention-in", precision), _attention_in(precision), probes)
        sizes = [
            _relative_error(m.value, e.value) if m.ok else None
            for m, e in zip(made, expected, strict=True)
        ]
        if any(z is None for z in sizes):
            continue
        if all(
            err <= 8 * z + 1e-7 and z <= 8 * err + 1e-7 for err, z in zip(errs, sizes, strict=True)
        ):
            return (
                f" Here its results are off from the right ones by up to {max(errs):.1g} of "
                f"their size, as much as {precision} rounding of the products gives."
            )
    return None


def _unit(a):
    return a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)


def _cosine_fit(given, probes) -> str | None:
    """The words for weights that are, on every probe, the softmax of the cosines of the
    queries and keys (each row of Q and K scaled to unit length) times a factor fitted to the
    weights (Swin V2's exp(logit_scale), a temperature), nothing masked; None otherwise."""
    scores = [_unit(Q) @ _t(_unit(K)) for Q, K, _ in (p.args for p in probes)]
    fit = fitted.scores_fit(given, scores, lambda i, w: (w @ probes[i].args[2], w))
    if fit is None or fit.masked:
        return None
    read = fit.read or (True,) * len(fit.factors)
    rs = [r for r, ok in zip(fit.factors, read, strict=True) if ok]
    if max(rs) - min(rs) <= 1e-3 * max(abs(r) for r in rs):
        factor = f"{float(np.mean(rs)):.3g} on every input"
    else:
        factor = f"between {min(rs):.3g} and {max(rs):.3g}, depending on the input"
    return (
        " On our inputs its weights are the softmax of the cosines of each query with each key "
        f"(Q and K scaled to unit length, then Q Kᵀ) times a factor of {factor}, in place of "
        "Q Kᵀ / sqrt(d_k)."
    )


def _rows_rescaled(given, probes) -> str | None:
    """The words for weights that are, on every probe, the right ones times a factor per row
    (an extra logit in the softmax, as an attention sink; exp never divided by its sum), the
    output their product with V; None otherwise."""
    scores = [Q @ _t(K) / math.sqrt(Q.shape[-1]) for Q, K, _ in (p.args for p in probes)]
    right = [ref.softmax(s, axis=-1) for s in scores]
    fit = fitted.rows_rescaled(given, right, scores, lambda i, w: (w @ probes[i].args[2], w))
    return None if fit is None else fitted.rows_words(fit)


def _elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


# Feature maps phi of kernelised (linear) attention: weights phi(q_i) . phi(k_j), normalised
# per query; and maps f of the scores themselves, normalised per query: (words, map, on).
KERNELS = (
    ("the feature map elu(x) + 1 on the queries and keys", _elu1, "features"),
    ("the feature map relu(x) on the queries and keys", lambda x: np.maximum(x, 0.0), "features"),
    (
        "the feature map softplus(x) on the queries and keys",
        lambda x: np.logaddexp(0.0, x),
        "features",
    ),
    ("the feature map exp(x) on the queries and keys", np.exp, "features"),
    ("the feature map x**2 on the queries and keys", np.square, "features"),
    (
        "the feature map relu(x)**2 on the queries and keys",
        lambda x: np.maximum(x, 0.0) ** 2,
        "features",
    ),
    (
        "the feature map sigmoid(x) on the queries and keys",
        lambda x: 1 / (1 + np.exp(-x)),
        "features",
    ),
    ("the plain dot products q . k", lambda s: s, "scores"),
    ("relu of the dot products", lambda s: np.maximum(s, 0.0), "scores"),
    ("the squared dot products", np.square, "scores"),
    ("relu of the dot products, squared", lambda s: np.maximum(s, 0.0) ** 2, "scores"),
    ("sigmoid of the dot products", lambda s: 1 / (1 + np.exp(-s)), "scores"),
    ("the dot products' absolute values", np.abs, "scores"),
)
# Where 1/sqrt(d_k) goes: nowhere, on the queries, or d_k^(-1/4) on each of Q and K.
_KERNEL_SCALES = (
    ("", lambda d: (1.0, 1.0)),
    (", the queries divided by sqrt(d_k) first", lambda d: (1 / math.sqrt(d), 1.0)),
    (", Q and K each divided by d_k^(1/4) first", lambda d: (d**-0.25, d**-0.25)),
)


def _kernel_weights(Q, K, f, on: str, scale) -> np.ndarray:
    a, b = scale(Q.shape[-1])
    if on == "features":
        return f(Q * a) @ _t(f(K * b))
    return f((Q * a) @ _t(K * b))


def _kernel_fit(given, probes) -> str | None:
    """The words for weights that are, on every probe, no softmax but a kernel's values
    normalised per query (``KERNELS``: linear attention's feature maps, or a map of the dot
    products), with an epsilon in the denominator read from the rows' sums, the output their
    product with V; None where none fits."""
    for (words, f, on), (where, scale) in itertools.product(KERNELS, _KERNEL_SCALES):
        made, epsilons = [], []
        for got, (Q, K, V) in zip(given, (p.args for p in probes), strict=True):
            w = fitted._weights(got.value) if got.ok else None
            with np.errstate(all="ignore"):
                N = _kernel_weights(np.asarray(Q, float), np.asarray(K, float), f, on, scale)
            if w is None or w.shape != N.shape or not np.all(np.isfinite(N)):
                break
            D = N.sum(axis=-1)
            r = w.sum(axis=-1)
            read = (np.abs(D) > 1e-9) & (r > 0)  # rows all zero tell no epsilon
            if not read.any():
                break
            # an epsilon added to each row's sum, read from the rows' sums
            e = float(np.median((D * (1.0 / np.where(read, r, 1.0) - 1.0))[read]))
            if abs(e) <= 1e-12 * float(np.max(np.abs(D))):
                e = 0.0
            epsilons.append(e)
            with np.errstate(all="ignore"):
                wk = np.nan_to_num(N / (D + e)[..., None])
            made.append(Outcome(value=(wk @ np.asarray(V, float), wk)))
        else:
            if matches(given, made):
                eps = max(epsilons, key=abs)
                plus = f" + {eps:.1g}" if abs(eps) > 1e-15 else ""
                return (
                    f" On our inputs its weights are {words}{where}, divided by their sum over "
                    f"the keys{plus}, with no exp and no softmax; its out is those weights times V."
                )
    return None


def _sparsemax(z: np.ndarray) -> np.ndarray:
    """Sparsemax over the last axis (Martins & Astudillo): the Euclidean projection onto the
    simplex, max(z - tau, 0)."""
    zs = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    cs = np.cumsum(zs, axis=-1)
    support = 1 + k * zs > cs
    kk = support.sum(axis=-1, keepdims=True)
    tau = (np.take_along_axis(cs, kk - 1, axis=-1) - 1) / kk
    return np.maximum(z - tau, 0.0)


def _entmax15(z: np.ndarray) -> np.ndarray:
    """1.5-entmax over the last axis (Peters, Niculae & Martins): max(z / 2 - tau, 0)**2, tau
    found exactly by sorting."""
    z = (z - z.max(axis=-1, keepdims=True)) / 2
    zs = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    mean = np.cumsum(zs, axis=-1) / k
    mean_sq = np.cumsum(zs**2, axis=-1) / k
    delta = (1 - k * (mean_sq - mean**2)) / k
    tau = mean - np.sqrt(np.maximum(delta, 0.0))
    kk = (tau <= zs).sum(axis=-1, keepdims=True)
    t = np.take_along_axis(tau, kk - 1, axis=-1)
    return np.maximum(z - t, 0.0) ** 2


# Sparse maps of the scores told by name where one reproduces the weights: (words, map).
SPARSE_MAPS = (("sparsemax", _sparsemax), ("1.5-entmax", _entmax15))


def _sparse_fit(given, probes) -> str | None:
    """The words for weights that are, on every probe, a distribution over the keys for each
    query (rows summing to 1, entries in [0, 1]) in the order of the scaled scores (a key never
    weighs more than one with a higher score), with exactly zero weight on some query's
    lowest-scoring keys where the softmax gives them weight, the output those weights times V:
    a sparse map in place of softmax. The map is named where sparsemax or 1.5-entmax of the
    scores (scaled or not) reproduces the results; None where the property does not hold."""
    zeroed = False
    for got, (Q, K, V) in zip(given, (p.args for p in probes), strict=True):
        w = fitted._weights(got.value) if got.ok else None
        Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
        s = Q @ _t(K) / math.sqrt(Q.shape[-1])
        if w is None or w.shape != s.shape or not np.all(np.isfinite(w)):
            return None
        if (w < -1e-12).any() or (w > 1 + 1e-9).any():
            return None
        if not np.allclose(w.sum(axis=-1), 1.0, atol=1e-8):
            return None
        if not same(got.value[0], w @ V):
            return None
        # in the scores' order: sorted by score, the weights never decrease
        order = np.argsort(s, axis=-1, kind="stable")
        ws = np.take_along_axis(w, order, axis=-1)
        if (np.diff(ws, axis=-1) < -1e-9).any():
            return None
        soft = ref.softmax(s, axis=-1)
        zeroed |= bool(((w == 0) & (soft > 1e-3)).any())
    if not zeroed:
        return None
    named_map = ""
    for (words, f), (where, scale) in itertools.product(SPARSE_MAPS, (("", 1), (" unscaled", 0))):
        made = []
        for Q, K, V in (p.args for p in probes):
            Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
            s = Q @ _t(K) / (math.sqrt(Q.shape[-1]) if scale else 1.0)
            wk = f(s)
            made.append(Outcome(value=(wk @ V, wk)))
        if matches(given, made):
            named_map = f" Its weights are {words} of the{where} scores."
            break
    return (
        " On our inputs its weights sum to 1 over the keys and follow the order of the scaled "
        "scores, but some queries give their lowest-scoring keys exactly zero weight, where "
        "the softmax gives every key some; its out is those weights times V." + named_map
    )


def _tied_probes() -> tuple:
    """Keys with the same dot product with every query (and the same length): any weights
    that are a function of q . k give them the same weight."""
    from ..probes import Probe

    Q = np.array([[1.0, 0.5, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0]])  # keys 0 and 1 tied for both
    K = np.array(
        [[0.3, 0.9, 0.2, -0.4], [0.95, -0.4, 0.1, math.sqrt(0.0275)], [-0.5, 0.3, 0.2, -0.1]]
    )
    V = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    return (Probe((Q, K, V)),)


def _additive(Q, K):
    return np.tanh(Q[..., :, None, :] + K[..., None, :, :]).sum(axis=-1)


def _not_dot_product(s: DiagnosisSession, given, probes) -> str | None:
    """The words for weights that are, on every probe, a distribution over the keys for each
    query (rows summing to 1, entries in [0, 1]) with the output those weights times V, and
    that give two keys of the same dot product with every query (and the same length)
    different weights: scores that are no function of q . k. Bahdanau's additive score
    sum(tanh(q + k)) is named where it reproduces the results; None otherwise."""
    for got, (Q, K, V) in zip(given, (p.args for p in probes), strict=True):
        w = fitted._weights(got.value) if got.ok else None
        if w is None or w.shape != Q.shape[:-1] + K.shape[-2:-1] or not np.isfinite(w).all():
            return None
        if (w < -1e-12).any() or not np.allclose(w.sum(axis=-1), 1.0, atol=1e-8):
            return None
        if not same(got.value[0], w @ np.asarray(V, float)):
            return None
    tied = _tied_probes()
    made = s.calls_made("attention", tied, {"softmax": ref.softmax}).given
    w = fitted._weights(made[0].value) if made[0].ok else None
    if w is None or w.shape != (2, 3) or abs(w[0, 0] - w[0, 1]) < 1e-6 + 1e-3 * abs(w[0, 0]):
        return None
    words = (
        " On our inputs its weights sum to 1 over the keys and its out is those weights times "
        "V, but two keys with the same dot product with a query (and the same length) get "
        "different weights: its scores are no function of q . k."
    )
    add = []
    for Q, K, V in (p.args for p in probes):
        wk = ref.softmax(_additive(np.asarray(Q, float), np.asarray(K, float)), axis=-1)
        add.append(Outcome(value=(wk @ V, wk)))
    if matches(given, add):
        words += " Its scores are the additive sum over the features of tanh(q + k)."
    return words


def _weights_layout(given, expected, probes) -> str | None:
    """The words for weights that are, on every probe, the right weights with their axes in
    another order (the keys before the queries: a book's one-column-per-token convention),
    with the output right or moved the same way; None where they are not."""
    seen = []
    out_right = True
    for got, want, p in zip(given, expected, probes, strict=True):
        if not got.ok or not isinstance(got.value, tuple | list) or len(got.value) != 2:
            return None
        out, weights = got.value
        w = as_array(weights)
        if w is None:
            return None
        if same(w, want.value[1]):
            if not same(out, want.value[0]):
                return None
            continue
        if not properties.transposed(w, want.value[1]):
            return None
        if not same(out, want.value[0]):
            if not properties.transposed(out, want.value[0]):
                return None
            out_right = False
        seen.append((w, want.value[1], p))
    if not seen:
        return None
    w, want, p = max(seen, key=lambda x: (x[0].shape != x[1].shape, x[0].ndim))
    Q, K, _ = p.args
    text = (
        f" On our input with Q of shape {tuple(Q.shape)} and K of shape {tuple(K.shape)} it "
        f"returns weights of shape {tuple(w.shape)}, where {tuple(want.shape)} (..., queries, "
        "keys) is expected, holding the right weights with their axes in another order"
    )
    text += "; its output is right." if out_right else "; its output is moved the same way."
    return text


def _width_probes() -> tuple[pr.Probe, ...]:
    """For each rank, n != m != d_k, with d_v equal to d_k and not."""
    r = np.random.default_rng(41)
    out = []
    for lead in ((), (2,), (2, 3)):
        for d_v in (3, 5):
            Q, K = r.standard_normal((*lead, 4, 3)), r.standard_normal((*lead, 6, 3))
            out.append(pr.Probe((Q, K, r.standard_normal((*lead, 6, d_v)))))
    return tuple(out)


def _width_bound(
    s: DiagnosisSession, given, expected, probes, own: bool = False
) -> tuple[list[int], bool] | None:
    """(the ranks it refuses, whether it refuses values of another width than the queries'),
    when on our inputs and on inputs that change one of these at a time it is right or raises,
    and raises exactly where its rank is refused or d_v != d_k, the width being one cause.
    ``own``: its results with its own softmax (``given`` the student's as handed in)."""
    extra = _width_probes()
    if own:
        more = s.student("attention", extra)
    else:
        more = s.calls_made("attention", extra, {"softmax": ref.softmax}).given
    want = trusted(("ref", "attention", "width"), mut.attention_ref, extra)
    every = list(zip((*probes, *extra), (*given, *more), (*expected, *want), strict=True))
    if any(got.ok and not matches([got], [e]) for _, got, e in every):
        return None
    refused = set()
    for rank in {p.args[0].ndim for p, _, _ in every}:
        at = [got for p, got, _ in every if p.args[0].ndim == rank]
        if all(not got.ok for got in at):
            refused.add(rank)
    for p, got, _ in every:
        Q, _, V = p.args
        raises = Q.ndim in refused or V.shape[-1] != Q.shape[-1]
        if raises == got.ok:
            return None
    width = any(not got.ok and p.args[0].ndim not in refused for p, got, _ in every)
    return (sorted(refused), True) if width else None


def _bound(s: DiagnosisSession, bound, wrong, called, own: bool = False) -> Diagnosis:
    """attention-output-query-width (and attention-expected-rank for ranks it refuses), with
    what it was seen to refuse."""
    refused, _ = bound
    ids = (("attention-expected-rank",) if refused else ()) + ("attention-output-query-width",)
    ids = tuple(i for i in CATALOGUE if i in ids)
    if wrong:
        found = s.with_callees("attention", ids, wrong)
    else:
        found = s.in_function("attention", ids, inline=False, called=called)
    did = CATALOGUE["attention-output-query-width"].did
    ranks = " and ".join(f"{r}-D" for r in refused)
    text = " On our inputs it raises wherever d_v != d_k" + (
        f", and for every {ranks} input," if refused else ","
    )
    text += (
        " and is right everywhere else with your own softmax (with a right softmax its "
        "results there would be wrong: it makes up for your softmax)."
        if own
        else " and is right everywhere else."
    )
    message = found.message.replace(did, did + text, 1)
    return named(found.misconceptions, found.blame, message, found.question)


def fit_ids(fit: fitted.ScoreFit, mask_id: str = "attention-masks-positions") -> tuple[str, ...]:
    return (("scale-wrong-factor",) if fit.scaled else ()) + ((mask_id,) if fit.masked else ())


def with_fit(
    found: Diagnosis, fit: fitted.ScoreFit | None, probes, d: str = "d_k", what: str = "head"
) -> Diagnosis:
    """``found`` with what the fitted scale and mask were, said after each one's message."""
    if fit is None:
        return found
    widths = [
        p.args[0].shape[-1] if d == "d_k" else p.args[0].shape[-1] // p.args[-1] for p in probes
    ]
    message = found.message
    for mid in found.misconceptions:
        if mid == "scale-wrong-factor":
            text = fitted.scale_words(fit, widths, d)
        elif mid.endswith("-masks-positions"):
            text = fitted.mask_words(fit, what)
        else:
            continue
        said = CATALOGUE[mid].did.split(" ", 2)[2]  # also as said of work done inline
        if said in message:
            message = message.replace(said, said + text, 1)
        else:
            message = f"{message}{text}"
    roots = tuple((fn, message if t == found.message else t) for fn, t in found.roots)
    return named(found.misconceptions, found.blame, message, found.question, roots)


def _own(s: DiagnosisSession, given, probes) -> tuple[tuple[str, ...], Callable, bool] | None:
    """Attention's own catalogued mistake, read from its results ``given`` a right softmax:
    (ids, the mutant, whether it is a softmax mistake written inline)."""
    softmaxes: list[tuple[tuple[str, ...], Callable]] = [((), ref.softmax)]
    softmaxes += [((i,), f) for i, fs in mut.SOFTMAX.items() for f in fs]
    attentions: list[tuple[tuple[str, ...], Callable]] = [((), mut.attention_ref)]
    attentions += [((i,), f) for i, fs in mut.ATTENTION.items() for f in fs]
    for a_ids, a in attentions[1:]:  # an own mistake
        if matches(given, trusted((a,), a, probes)):
            return a_ids, a, False
    for (a_ids, a), (s_ids, sm) in itertools.product(attentions, softmaxes[1:]):
        f = partial(a, softmax=sm)
        if matches(given, trusted((a, sm), f, probes)):  # a softmax written inline
            return a_ids + s_ids, f, not a_ids
    for a_ids, a in [(ids, f) for ids, fs in mut.ATTENTION_COMBINED.items() for f in fs]:
        if matches(given, trusted((a,), a, probes)):  # two mistakes of its own at once
            return a_ids, a, False
    # A softmax written inline that is right on moderate scores and overflows on large ones,
    # whatever nan, inf or zeros its way of writing it gives there (trax's exp(x - logsumexp)
    # without the max gives zeros where the naive softmax gives nan).
    if large_only_overflow(given, probes, attentions[0][1]):
        return ("softmax-unstable",), attentions[0][1], True
    for a_ids, a in attentions[1:]:
        if large_only_overflow(given, probes, a):
            return (*a_ids, "softmax-unstable"), a, False
    return None


def large_only_overflow(given, probes, f, key: tuple | None = None) -> bool:
    """``given`` is ``f``'s (``trusted`` under ``key``) on every moderate probe, and on every
    large-score probe its weights are no softmax's (properties.overflowed): a softmax of its
    own, or one it was handed, that is not stable."""
    mod = [i for i, p in enumerate(probes) if not p.large]
    big = [i for i, p in enumerate(probes) if p.large]
    if not big or not all(properties.overflowed(given[i]) for i in big):
        return False
    want = trusted(key or (f,), f, probes)
    return matches([given[i] for i in mod], [want[i] for i in mod])


def _refused_ranks(given, expected, probes) -> tuple[list[int], list[int]] | None:
    """(the ranks of input it raises for on every probe, those it is right for on every
    probe), when every rank is one or the other and both occur: a rank it refuses."""
    refused: set[int] = set()
    right: set[int] = set()
    for rank in {p.args[0].ndim for p in probes}:
        at = [i for i, p in enumerate(probes) if p.args[0].ndim == rank]
        if all(not given[i].ok for i in at):
            refused.add(rank)
        elif matches([given[i] for i in at], [expected[i] for i in at]):
            right.add(rank)
        else:
            return None
    return (sorted(refused), sorted(right)) if refused and right else None


def _refuses(s: DiagnosisSession, ranks, wrong, called) -> Diagnosis:
    """attention-expected-rank, with the ranks it refused and those it got right."""
    refused, right = (" and ".join(f"{r}-D" for r in rs) for rs in ranks)
    ids = ("attention-expected-rank",)
    if wrong:
        found = s.with_callees("attention", ids, wrong)
    else:
        found = s.in_function("attention", ids, inline=False, called=called)
    did = CATALOGUE[ids[0]].did
    text = f" On our inputs it raises for {refused} ones and is right for {right} ones."
    message = found.message.replace(did, did + text, 1)
    return named(found.misconceptions, found.blame, message, found.question)


RANK_SPECIFIC = ("attention-3d-transpose", "attention-fixed-rank")


# What a mistake fixed for one rank fixed, by the slot of attention it changes.
FIXED = {
    "transpose": " Here it is how K is transposed.",
    "axis": " Here it is the axis of the softmax.",
    "scale": " Here it is the width d_k, read from axis 1.",
    "product": " Here it is the product itself: NumPy's dot pairs fixed axes.",
}


def _with_ranks(s: DiagnosisSession, found: Diagnosis, student, mutant) -> Diagnosis:
    """For a mistake that fits one rank of input: what was fixed, and which ranks of our inputs
    it got right."""
    if not set(found.misconceptions) & set(RANK_SPECIFIC):
        return found
    changes = dict(getattr(mutant, "changes", {}))
    if "attention-fixed-rank" not in found.misconceptions:
        changes.pop("transpose", None)  # K.T: its message says so already
    if changes.get("scale") != "sqrt-axis1":
        changes.pop("scale", None)  # a wrong scale is a mistake of its own, with its message
    text = "".join(FIXED[slot] for slot in FIXED if slot in changes)
    probes = pr.attention_probes()
    expected = trusted(("ref", "attention"), mut.attention_ref, probes)
    right: set[int] = set()
    wrong: set[int] = set()
    for got, want, p in zip(student, expected, probes, strict=True):
        (right if matches([got], [want]) else wrong).add(p.args[0].ndim)
    if right and wrong:
        ranks = " and ".join(f"{r}-D" for r in sorted(right))
        others = " and ".join(f"{r}-D" for r in sorted(wrong - right))
        text += f" On our inputs it is right for {ranks} ones"
        text += f" and fails for {others} ones." if others else ", but not for all of them."
    # said right after the rank-specific mistake's own message
    last = [CATALOGUE[i].message for i in found.misconceptions if i in RANK_SPECIFIC][-1]
    message = found.message.replace(last, last + text, 1)
    return named(found.misconceptions, found.blame, message, found.question)


def _properties(s: DiagnosisSession, got, want, probe) -> list[str]:
    """What a right attention always has, said of the student's result on this probe."""
    out, weights = got
    Q, K, V = probe.args
    moved = properties.transposed(weights, want[1])
    found = [f"its weights: {moved}"] if moved else []
    found += [] if moved else [f"its weights: {t}" for t in properties.rows(weights)]
    product = properties.out_is_weights_times_v(out, weights, V)
    if product:
        found.append(product)
    elif not found and not same(weights, want[1]):
        found.append(
            "its weights are probabilities over the keys and out is its weights times V, so "
            "the scores are what differ: check Q Kᵀ (K transposed on its last two axes) and "
            "the scaling by sqrt(d_k)"
        )
    try:  # an output that ignores V (one more call, only to explain an unknown mistake)
        again = s.fn("attention")(Q, K, V * 2.0 + 1.0)
        if isinstance(again, tuple | list) and len(again) == 2:
            ignored = properties.ignores(again[0], out, "V")
            if ignored:
                found.append(f"its out: {ignored}")
    except errors.StudentCodeError:
        pass
    return found
