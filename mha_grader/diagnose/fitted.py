"""Catalogued mistakes that are classes with a free parameter, not single examples: a cap on
the scores whatever its size (``c * tanh(s / c)`` or a clip to ``[-c, c]``, the cap fitted to
the student's weights on each probe), rotary position embeddings whatever the fraction of
each head they rotate and their base (searched), a bias on the scores by the key's position
relative to the query (ALiBi of any slopes, a relative position bias: fitted per probe),
grouped-query attention of any group size, multi-query attention its case of one key/value head
(searched per probe), weights whose rows are the right ones times a factor (an attention sink,
any extra logit, a missing normalisation: fitted). A class is
named only when the fitted or searched member reproduces the student's results on every probe
(``matches``), as a mutant must: other transformations of the scores (a temperature, a bias by
absolute positions) fit no member and stay unnamed."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import mutants as mut
from .compare import Outcome, as_array, matches, run
from .probes import Probe
from .trusted import trusted

# Caps tried, from almost everything capped to almost nothing: the fit starts on this grid.
_GRID = np.geomspace(0.05, 2e4, 181)
_GOLDEN = (math.sqrt(5) - 1) / 2


def _weights(value) -> np.ndarray | None:
    if not isinstance(value, tuple | list) or len(value) != 2:
        return None
    w = as_array(value[1])
    return w.astype(np.float64) if w is not None else None


def _fit(make: Callable[[float], Callable], probe: Probe, target: np.ndarray) -> Outcome:
    """The outcome of ``make(c)`` on ``probe`` for the cap ``c`` whose weights come nearest
    ``target`` (a grid, then a golden-section search between the grid's neighbours)."""
    return fit_cap(make, probe, target)[1]


def fit_cap(
    make: Callable[[float], Callable], probe: Probe, target: np.ndarray
) -> tuple[float, Outcome]:
    """The cap ``c`` whose ``make(c)`` gives weights nearest ``target`` on ``probe``, and that
    outcome (a grid, then a golden-section search between the grid's neighbours)."""

    def loss(c: float) -> float:
        w = _weights(run(make(c), [probe])[0].value)
        if w is None or w.shape != target.shape or not np.all(np.isfinite(w)):
            return math.inf
        return float(np.max(np.abs(w - target)))

    losses = [loss(c) for c in _GRID]
    i = int(np.argmin(losses))
    lo, hi = math.log(_GRID[max(i - 1, 0)]), math.log(_GRID[min(i + 1, len(_GRID) - 1)])
    a, b = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    fa, fb = loss(math.exp(a)), loss(math.exp(b))
    for _ in range(60):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - _GOLDEN * (hi - lo)
            fa = loss(math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + _GOLDEN * (hi - lo)
            fb = loss(math.exp(b))
    best = float(min((losses[i], _GRID[i]), (fa, math.exp(a)), (fb, math.exp(b)))[1])
    return best, run(make(best), [probe])[0]


def capped(
    given: Sequence[Outcome], probes: Sequence[Probe], bind: Callable[[float, str], Callable]
) -> bool:
    """``given`` is, on every probe, a cap on the scores of some size (``bind(c, how)``: the
    function with that cap), of one kind for all probes. The size may differ from probe to
    probe: a cap on the unscaled scores is one of c / sqrt(d_k) on the scaled ones."""
    for how in mut.CAPS:
        fitted: list[Outcome] = []
        for got, probe in zip(given, probes, strict=True):
            target = _weights(got.value) if got.ok else None
            if target is None or not np.all(np.isfinite(target)):
                break
            one = _fit(lambda c, how=how: bind(c, how), probe, target)
            if not matches([got], [one]):
                break
            fitted.append(one)
        else:
            if matches(given, fitted):
                return True
    return False


# Rotary variants searched beyond the catalogue's mutants: the fraction of each head rotated
# (GPT-NeoX's rotary_pct), the base (LLaMA 3's 500000, others' 1e6), and an odd width refused
# or rounded down to an even one.
FRACTIONS = (1.0, 0.5, 0.25)
BASES = (10000.0, 500000.0, 1000000.0)


def rotary(
    given: Sequence[Outcome], probes: Sequence[Probe], bind: Callable[[Callable], Callable]
) -> bool:
    """``given`` is the pipeline with rotary embeddings of some style, fraction and base
    (``bind(mutant)``: the pipeline of a multi_head_attention mutant)."""
    variants = itertools.product(("half", "pairs"), FRACTIONS, BASES, (False, True))
    for v in variants:
        if matches(given, trusted(("rotary", *v), bind(mut.rotary(*v)), probes)):
            return True
    return False


def position_bias(given: Sequence[Outcome], probes: Sequence[Probe]) -> bool:
    """``given`` is, on every probe, multi-head attention whose scores have a bias added that
    depends only on the head and on the key's position relative to the query (ALiBi of any
    slopes and kind, a relative position bias as T5's): the bias is fitted per probe (least
    squares on the log-weights, a constant per query row left free), then the pipeline with
    it must reproduce the student's weights and output."""
    from solutions import multihead as ref

    for got, probe in zip(given, probes, strict=True):
        target = _weights(got.value) if got.ok else None
        X, Wq, Wk, Wv, Wo, h = probe.args
        n, d_model = X.shape
        if target is None or d_model % h or target.shape != (h, n, n):
            return False
        d_head = d_model // h
        Qh, Kh, Vh = (ref.split_heads(X @ W, h, d_head) for W in (Wq, Wk, Wv))
        scores = Qh @ np.swapaxes(Kh, -1, -2) / math.sqrt(d_head)
        rows, cols = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        design = np.zeros((n * n, 3 * n - 1))
        design[np.arange(n * n), (cols - rows + n - 1).ravel()] = 1.0
        design[np.arange(n * n), 2 * n - 1 + rows.ravel()] = 1.0
        weights = np.empty_like(scores)
        with np.errstate(divide="ignore", invalid="ignore"):
            for head in range(h):
                w = np.asarray(target[head], dtype=float)
                keep = (w > 0).ravel() & np.isfinite(w).ravel()
                if not keep.any():
                    return False
                logs = (np.log(w) - scores[head]).ravel()
                fit = np.linalg.lstsq(design[keep], logs[keep], rcond=None)[0]
                bias = fit[: 2 * n - 1][cols - rows + n - 1]
                z = scores[head] + bias
                e = np.exp(z - z.max(axis=-1, keepdims=True))
                weights[head] = e / e.sum(axis=-1, keepdims=True)
        one = Outcome((ref.merge_heads(weights @ Vh) @ Wo, weights))
        if not matches([got], [one]):
            return False
    return True


@dataclass(frozen=True)
class Grouped:
    """How one probe's keys and values were shared: ``kv`` key/value heads (``heads`` query
    heads; kv == heads: each its own, right there), made from the ``block`` ("first" or
    "last") kv * d_head columns of Wk and Wv, given to the query heads in ``order``
    ("repeat": consecutive query heads share one, as repeat_kv; "tile": head i uses kv head
    i % kv)."""

    heads: int
    kv: int
    block: str = "first"
    order: str = "repeat"


def _shared(probe: Probe, g: Grouped) -> tuple:
    """The reference pipeline on ``probe`` with ``g``'s key and value heads."""
    from solutions import multihead as ref

    X, Wq, Wk, Wv, Wo, h = probe.args
    d_model = X.shape[-1]
    d_head = d_model // h
    width = g.kv * d_head
    cols = slice(0, width) if g.block == "first" else slice(d_model - width, None)
    Qh = ref.split_heads(X @ Wq, h, d_head)
    Kh, Vh = (ref.split_heads(X @ W[:, cols], g.kv, d_head) for W in (Wk, Wv))
    if g.order == "repeat":
        Kh, Vh = (np.repeat(a, h // g.kv, axis=0) for a in (Kh, Vh))
    else:
        Kh, Vh = (np.tile(a, (h // g.kv, 1, 1)) for a in (Kh, Vh))
    out, weights = ref.attention(Qh, Kh, Vh)
    return ref.merge_heads(out) @ Wo, weights


def grouped_query(given: Sequence[Outcome], probes: Sequence[Probe]) -> tuple[Grouped, ...] | None:
    """``given`` is, on every probe, attention with fewer key/value heads than query heads, each
    shared by a group of query heads (grouped-query attention of any group size; multi-query
    attention: one key/value head for all), made from one end of Wk and Wv, or each head its
    own (right on that probe), of one block and order for every probe that shares. The number
    of key/value heads is read per probe (Qwen2's ``num_heads // 2``, a fixed one). None: not
    such a layer, or no probe shares."""
    for block, order in itertools.product(("first", "last"), ("repeat", "tile")):
        found: list[Grouped] = []
        for got, probe in zip(given, probes, strict=True):
            if not got.ok:
                break
            h = probe.args[-1]
            if probe.args[0].shape[-1] % h:
                break
            for kv in [h, *(k for k in range(1, h) if h % k == 0)]:
                g = Grouped(h, kv, block, order)
                if matches([got], [Outcome(value=_shared(probe, g))]):
                    found.append(g)
                    break
            else:
                break
        else:
            if any(g.kv < g.heads for g in found):
                return tuple(found)
    return None


def grouped_words(found: Sequence[Grouped]) -> str:
    """How many key/value heads it used for each head count seen, from which columns."""
    by_heads: dict[int, Grouped] = {}
    for g in found:
        by_heads.setdefault(g.heads, g)
    shared = [g for g in found if g.kv < g.heads]
    block, order = shared[0].block, shared[0].order
    parts = []
    for h, g in sorted(by_heads.items(), reverse=True):
        if g.kv == h:
            parts.append(f"with {h} heads, each its own (right there)")
        elif g.kv == 1:
            every = "both" if h == 2 else f"all {h}"
            parts.append(f"with {h} heads, 1 key/value head shared by {every}")
        else:
            parts.append(
                f"with {h} heads, {g.kv} key/value heads, each shared by {h // g.kv} query heads"
            )
    how = (
        "consecutive query heads sharing one (as repeat_kv does)"
        if order == "repeat"
        else "query head i using key/value head i % (their number) (as a tile does)"
    )
    return (
        f" On our inputs: {'; '.join(parts)}. The key/value heads are the {block} d_head-wide "
        f"blocks of Wk's and Wv's columns, as many as there are key/value heads, {how}; the "
        "other columns are never used."
    )


# -- any scale, any mask: the weights are a softmax of the right scores times a constant, with
# some keys masked (the classes beyond every catalogued scale and mask) ------------------------

_KEPT = 1e-30  # a weight above this was not masked: its log is read for the scale
_ZERO = 1e-12  # a weight at most this is zero: masked, where unmasked it would not be
_SEEN = 1e-6  # a weight at least this would be seen: zero there is a mask, not a scale


@dataclass(frozen=True)
class ScoreFit:
    """The student's weights as ``softmax(r * S)`` of the right scaled scores ``S`` on each
    probe, with the keys in ``masks`` (True: masked) left out: ``factors`` are the ``r``, how
    many times 1/sqrt(d_k) the scale it uses is (1: the right one)."""

    factors: tuple[float, ...]
    masks: tuple[np.ndarray, ...]
    read: tuple[bool, ...] = ()  # the factor was read off that probe (not filled in)

    @property
    def scaled(self) -> bool:
        return any(abs(r - 1.0) > 1e-3 for r in self.factors)

    @property
    def masked(self) -> bool:
        return any(m.any() for m in self.masks)


def _softmax(z: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _factor(w: np.ndarray, s: np.ndarray) -> float | None:
    """The least-squares ``r`` with log w = r * s + a constant per row, on the weights that
    were not masked (None: no row has two of them with different scores)."""
    with np.errstate(all="ignore"):
        logs = np.where(w > _KEPT, np.log(np.where(w > _KEPT, w, 1.0)), np.nan)
    top = np.nanargmax(np.where(np.isnan(logs), -np.inf, logs), axis=-1)[..., None]
    a = logs - np.take_along_axis(logs, top, axis=-1)
    b = s - np.take_along_axis(s, top, axis=-1)
    keep = ~np.isnan(a)
    den = float(np.sum(b[keep] ** 2))
    if den < 1e-12:
        return None
    r = float(np.sum(a[keep] * b[keep]) / den)
    return r if math.isfinite(r) else None


def scores_fit(
    given: Sequence[Outcome],
    scores: Sequence[np.ndarray],
    finish: Callable[[int, np.ndarray], tuple],
) -> ScoreFit | None:
    """``given`` is, on every probe ``i``, ``finish(i, weights)`` for the weights
    ``softmax(r * scores[i])`` with some keys masked (their weights zero): a scale other than
    1/sqrt(d_k) by any factor ``r``, a mask of any pattern, or both. The factor is fitted to
    the weights that are not zero, the mask read from those that are zero where the scaled
    softmax would not be; the fitted member must reproduce the student's results (out and
    weights) on every probe. None: not such a member, or the right attention itself."""
    targets = []
    for got, s in zip(given, scores, strict=True):
        w = _weights(got.value) if got.ok else None
        if w is None or w.shape != s.shape or not np.all(np.isfinite(w)) or np.any(w < -1e-9):
            return None
        targets.append(w)
    found = [_factor(w, s) for w, s in zip(targets, scores, strict=True)]
    known = [r for r in found if r is not None]
    if not known:
        return None
    fill = float(np.median(known))
    factors, masks, fitted = [], [], []
    for i, (w, s, r) in enumerate(zip(targets, scores, found, strict=True)):
        r = fill if r is None else r
        # zero where the scaled softmax would not be; a key masked can bring up others that
        # were below seeing before, so again with the mask so far, until nothing is added
        mask = np.zeros(w.shape, dtype=bool)
        for _ in range(w.shape[-1]):
            more = mask | ((w <= _ZERO) & (_softmax(np.where(mask, -np.inf, r * s)) >= _SEEN))
            if np.array_equal(more, mask):
                break
            mask = more
        z = np.where(mask, -np.inf, r * s)
        fitted.append(Outcome(value=finish(i, _softmax(z))))
        factors.append(r)
        masks.append(mask)
    fit = ScoreFit(tuple(factors), tuple(masks), tuple(r is not None for r in found))
    if not (fit.scaled or fit.masked) or not matches(given, fitted):
        return None
    return fit


def _nice(x: float) -> str:
    """``x`` as a short number: an integer or a simple fraction where it is one."""
    for den in (1, 2, 3, 4, 8):
        if abs(x * den - round(x * den)) < 1e-3 * max(1.0, abs(x)) and round(x * den):
            num = round(x * den)
            return f"{num}" if den == 1 else f"{num}/{den}"
    return f"{x:.3g}"


def scale_words(fit: ScoreFit, widths: Sequence[int], d: str = "d_k") -> str:
    """What scale the student used, from the fitted factors and each probe's width ``d``."""
    read = fit.read or (True,) * len(fit.factors)
    pairs = [(r, w) for r, w, ok in zip(fit.factors, widths, read, strict=True) if ok]
    rs = [r for r, _ in pairs]
    cs = [r / math.sqrt(w) for r, w in pairs]
    if max(rs) - min(rs) <= 1e-3 * max(abs(r) for r in rs):
        r = float(np.mean(rs))
        if r <= 0:
            return (
                f" On our inputs your weights are the softmax of the scores times {r:.3g} / "
                f"sqrt({d}): the sign of the scale is wrong, so the largest scores get the "
                "smallest weights."
            )
        k = 1.0 / (r * r)
        if "/" not in _nice(k) and "." not in _nice(k):
            as_root = f"Q Kᵀ / sqrt({_nice(k)} * {d})"
        elif "/" not in _nice(1.0 / k) and "." not in _nice(1.0 / k):
            as_root = f"Q Kᵀ / sqrt({d} / {_nice(1.0 / k)})"
        else:
            as_root = f"the scores times {r:.3g} / sqrt({d})"
        return (
            f" On our inputs your weights are the softmax of {as_root}: a scale "
            f"{_nice(r)} times the right 1/sqrt({d}) ({'larger' if r > 1 else 'smaller'}), "
            f"so the weights come out {'sharper' if r > 1 else 'flatter'} than they should."
        )
    if max(cs) - min(cs) <= 1e-3 * max(abs(c) for c in cs):
        c = float(np.mean(cs))
        return (
            f" On our inputs your weights are the softmax of Q Kᵀ times {_nice(c)} whatever "
            f"{d} is (1/sqrt({_nice(1.0 / (c * c))}) for every width): a fixed number where the "
            f"scale must follow the width {d} of the inputs."
        )
    lo, hi = min(rs), max(rs)
    return (
        f" On our inputs the scale it uses changes with the shapes in another way than "
        f"1/sqrt({d}): between {lo:.3g} and {hi:.3g} times the right one."
    )


def _band(keep: np.ndarray) -> tuple[int, int] | None:
    """(lo, hi) when the kept keys are those at offsets lo..hi from the query's position."""
    n, m = keep.shape
    offsets = np.arange(m)[None, :] - np.arange(n)[:, None]
    if not keep.any():
        return None
    lo, hi = int(offsets[keep].min()), int(offsets[keep].max())
    return (lo, hi) if np.array_equal(keep, (offsets >= lo) & (offsets <= hi)) else None


def _offset(k: int) -> str:
    if k == 0:
        return "its own position"
    return f"{abs(k)} position{'s' if abs(k) != 1 else ''} {'before' if k < 0 else 'after'} it"


def _keys(row: np.ndarray) -> str:
    kept = [int(j) for j in np.flatnonzero(row)]
    return "none" if not kept else ", ".join(map(str, kept))


def mask_words(fit: ScoreFit, what: str = "head") -> str:
    """The pattern of the keys the student masked, read from the largest probe with a mask."""
    masked = [m for m in fit.masks if m.any()]
    mask = max(masked, key=lambda m: m.shape[-2] * m.shape[-1])
    slices = mask.reshape(-1, *mask.shape[-2:])
    if not all(np.array_equal(x, slices[0]) for x in slices[1:]):
        return (
            f" Which keys are masked is not the same in every {what}: on our inputs it "
            "depends on the values, not only on the positions (a top-k or threshold mask, "
            "for one)."
        )
    keep = ~slices[0]
    n, m = keep.shape
    band = _band(keep)
    said = f"on our input of {n} queries and {m} keys, "
    if band is not None:
        lo, hi = band
        if lo <= -(n - 1) and hi < m - 1:
            pattern = (
                "each query sees only the keys up to its own position (a causal mask)"
                if hi == 0
                else f"each query sees the keys up to {hi} position{'s' if hi != 1 else ''} "
                "after its own (a lower triangle)"
                if hi > 0
                else f"each query sees only the keys at least {-hi} positions before its own "
                "(a lower triangle)"
            )
        elif hi >= m - 1 and lo > -(n - 1):
            pattern = (
                f"each query sees only the keys from {lo} positions from its own on (an upper "
                "triangle)"
            )
        elif lo == -hi:
            pattern = (
                f"each query sees only the keys within {hi} position{'s' if hi != 1 else ''} of "
                f"its own (a band: a sliding window of {2 * hi + 1} keys)"
            )
        elif hi == 0:
            pattern = (
                f"each query sees only its own position and the {-lo} key"
                f"{'s' if lo != -1 else ''} before it (a causal sliding window of {1 - lo} keys)"
            )
        else:
            pattern = f"each query sees only the keys from {_offset(lo)} to {_offset(hi)} (a band)"
    elif all(np.array_equal(row, keep[0]) for row in keep[1:]):
        pattern = f"every query sees only the keys {_keys(keep[0])}, the same for every query"
    else:
        rows = "; ".join(f"query {i} sees keys {_keys(keep[i])}" for i in range(min(n, 3)))
        pattern = f"{rows}{'; ...' if n > 3 else ''}"
    return f" Here the mask is a pattern by position: {said}{pattern}."


# -- weights whose rows do not sum to 1: the right weights times a factor per row (an extra
# logit in the softmax's denominator, as an attention sink or a "softmax plus one", a missing
# or other normalisation) ---------------------------------------------------------------------


@dataclass(frozen=True)
class RowFit:
    """The student's weights as the right weights times a positive factor per row: ``sums``
    are those factors (each row's sum), ``scores`` the right scaled scores of each probe."""

    sums: tuple[np.ndarray, ...]
    scores: tuple[np.ndarray, ...]


def rows_rescaled(
    given: Sequence[Outcome],
    right: Sequence[np.ndarray],
    scores: Sequence[np.ndarray],
    finish: Callable[[int, np.ndarray], tuple],
) -> RowFit | None:
    """``given`` is, on every probe ``i``, ``finish(i, weights)`` for weights that are the
    right ones (``right[i]``) times a positive factor per row (the row's sum), the rows not all
    summing to 1: whatever shrinks or grows them (a logit added to the softmax's denominator
    and dropped, exp without its division, a factor). None: not such weights, or rows that sum
    to 1 (the right weights, or a mistake of another kind)."""
    sums, fitted = [], []
    for i, (got, w_right) in enumerate(zip(given, right, strict=True)):
        w = _weights(got.value) if got.ok else None
        if w is None or w.shape != w_right.shape or not np.all(np.isfinite(w)):
            return None
        if np.any(w < -1e-12):
            return None
        c = w.sum(axis=-1)
        if np.any(c <= 0):
            return None
        sums.append(c)
        fitted.append(Outcome(value=finish(i, c[..., None] * w_right)))
    if max(float(np.max(np.abs(c - 1.0))) for c in sums) <= 1e-4:
        return None
    if not matches(given, fitted):
        return None
    return RowFit(tuple(sums), tuple(np.asarray(s, dtype=np.float64) for s in scores))


def _logsumexp(s: np.ndarray) -> np.ndarray:
    top = s.max(axis=-1)
    return top + np.log(np.exp(s - top[..., None]).sum(axis=-1))


def _minus_max(s: np.ndarray) -> np.ndarray:
    return s - s.max(axis=-1, keepdims=True)


def rows_words(fit: RowFit, what: str = "head") -> str:
    """What the rows' sums were, and what gives them: one extra logit of a fixed value (a sink,
    0: a softmax plus one), one per ``what``, exp without the division, or a factor of each
    row's own."""
    sums = np.concatenate([c.ravel() for c in fit.sums])
    lo, hi = float(sums.min()), float(sums.max())
    said = f" On our inputs the rows of its weights sum to between {lo:.3g} and {hi:.3g}, not 1"
    if hi - lo <= 1e-6 * hi:  # one factor for every row of every input
        return (
            f" On our inputs every row of its weights is the right row times {lo:.4g}, the same "
            "factor for every row and every input: the rows sum to that, not 1."
        )
    if hi <= 1.0 + 1e-6:
        logits, by_head = [], []
        for c, s in zip(fit.sums, fit.scores, strict=True):
            keep = (c > 1e-6) & (c < 1.0 - 1e-4)
            with np.errstate(all="ignore"):
                L = _logsumexp(s) + np.log(1.0 / c - 1.0)
            logits.append(L[keep])
            if c.ndim >= 2:  # one per slice of the leading axes: a head's
                L2, k2 = L.reshape(-1, L.shape[-1]), keep.reshape(-1, keep.shape[-1])
                by_head += [x[k] for x, k in zip(L2, k2, strict=True) if k.any()]
        seen = np.concatenate(logits) if logits else np.empty(0)
        if seen.size and np.ptp(seen) <= 1e-3 * max(1.0, float(np.max(np.abs(seen)))):
            L = float(np.mean(seen))
            value = "0 (a softmax plus one)" if abs(L) < 1e-3 else f"{L:.3g}"
            return (
                f"{said}: each row is the right row scaled down by exactly what one extra "
                f"logit of {value}, joined to the scaled scores for the softmax and dropped "
                "after it, takes away (an attention sink)."
            )
        if by_head and all(np.ptp(x) <= 1e-3 * max(1.0, float(np.max(np.abs(x)))) for x in by_head):
            return (
                f"{said}: each row is the right row scaled down by exactly what one extra logit "
                f"per {what} (a value of each {what}'s own), joined to the scaled scores for the "
                "softmax and dropped after it, takes away (an attention sink)."
            )
        return f"{said}: each row is the right row scaled down by a factor of its own."
    if lo >= 1.0 - 1e-6:
        for words, f in (
            ("exp of the scaled scores minus each row's maximum", _minus_max),
            ("exp of the scaled scores", lambda s: s),
        ):
            with np.errstate(all="ignore"):
                tops = [np.exp(f(s)).sum(axis=-1) for s in fit.scores]
            if all(np.allclose(c, t, rtol=1e-4) for c, t in zip(fit.sums, tops, strict=True)):
                return f"{said}: they are {words}, never divided by their sum."
        return f"{said}: each row is the right row scaled up by a factor of its own."
    return f"{said}: each row is the right row times a factor of its own."


# -- the returned weights a transform of the right ones: mixed with the uniform distribution
# ((1 - e) w + e / m, a smoothing "to avoid NaNs", or eps added and the rows renormalised) or
# raised to a power and renormalised (a temperature on the weights alone), the output the right
# one or the one those weights give ------------------------------------------------------------


@dataclass(frozen=True)
class WeightsFit:
    """How the returned weights were transformed: ``kind`` "mix" (``values`` the weights of
    the uniform distribution, one per probe) or "power" (the powers, one per probe), and
    whether the output follows the transformed weights (``follows``) or is the right one."""

    kind: str
    values: tuple[float, ...]
    follows: bool


def _mixed(w: np.ndarray, got: np.ndarray) -> tuple[float, np.ndarray] | None:
    u = np.full_like(w, 1.0 / w.shape[-1]) - w
    den = float(np.sum(u * u))
    if den <= 1e-18:
        return None
    e = float(np.sum((got - w) * u)) / den
    return e, w + e * u


def _powered(w: np.ndarray, got: np.ndarray) -> tuple[float, np.ndarray] | None:
    """The power ``a`` with ``got`` = w**a renormalised per row, fitted on the entries both
    hold above underflow (each against its row's largest), and the weights it gives."""
    if np.any(w < 0) or np.any(got < 0):
        return None
    lw, lg = np.log(w), np.log(got)
    lw, lg = lw - lw.max(axis=-1, keepdims=True), lg - lg.max(axis=-1, keepdims=True)
    ok = np.isfinite(lw) & np.isfinite(lg) & (lw > -600) & (lg > -600)
    den = float(np.sum(lw[ok] ** 2))
    if den <= 1e-18:
        return None
    a = float(np.sum(lw[ok] * lg[ok])) / den
    if a <= 0:
        return None
    z = np.exp(a * lw)
    return a, z / z.sum(axis=-1, keepdims=True)


def weights_transformed(
    given: Sequence[Outcome],
    right: Sequence[np.ndarray],
    outs: Sequence[np.ndarray],
    finish: Callable[[int, np.ndarray], tuple],
) -> WeightsFit | None:
    """``given`` is, on every probe ``i``, the right output ``outs[i]`` (or ``finish(i, t)``'s,
    the output the transformed weights give) with weights ``t`` a transform of the right ones
    ``right[i]``: mixed with the uniform distribution over the keys, or raised to a power and
    renormalised (a temperature), the transform's parameter fitted per probe and not the
    identity on some probe. None otherwise."""
    for kind, fit in (("mix", _mixed), ("power", _powered)):
        values, fits = [], []
        for got, w in zip(given, right, strict=True):
            g = _weights(got.value) if got.ok else None
            if g is None or g.shape != w.shape or not np.all(np.isfinite(g)):
                return None
            with np.errstate(all="ignore"):
                found = fit(w, g)
            if found is None:
                break
            values.append(found[0])
            fits.append(found[1])
        else:
            identity = 0.0 if kind == "mix" else 1.0
            if all(abs(v - identity) <= 1e-9 for v in values):
                continue
            for follows in (False, True):
                made = [
                    Outcome(value=finish(i, t) if follows else (outs[i], t))
                    for i, t in enumerate(fits)
                ]
                if matches(given, made):
                    return WeightsFit(kind, tuple(values), follows)
    return None


def weights_words(fit: WeightsFit) -> str:
    """What was seen of the returned weights: the mix with the uniform distribution, or the
    power, and what the output does."""
    lo, hi = min(fit.values), max(fit.values)
    value = f"{lo:.3g}" if hi - lo <= 1e-6 * max(abs(hi), 1e-12) else f"{lo:.3g} to {hi:.3g}"
    if fit.kind == "mix":
        how = (
            f"the right weights mixed with the uniform distribution over the keys, "
            f"(1 - e) w + e / m with e = {value} (rows still summing to 1, every weight pulled "
            "toward 1 / m)"
        )
    else:
        how = (
            f"the right weights raised to the power {value} and each row renormalised (a "
            f"temperature of {1 / hi:.3g} on the weights)"
            if hi - lo <= 1e-6 * abs(hi)
            else f"the right weights raised to a power of {value} and each row renormalised"
        )
    out = (
        "its output is the one those weights give"
        if fit.follows
        else "its output is the right one, from the weights before that change"
    )
    return f" On our inputs its weights are {how}; {out}."
