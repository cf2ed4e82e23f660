"""Catalogued mistakes that are classes with a free parameter, not single examples: a cap on
the scores whatever its size (``c * tanh(s / c)`` or a clip to ``[-c, c]``, the cap fitted to
the student's weights on each probe), rotary position embeddings whatever the fraction of
each head they rotate and their base (searched), a bias on the scores by the key's position
relative to the query (ALiBi of any slopes, a relative position bias: fitted per probe),
multi-query attention's shared head from the first or the last block (searched). A class is
named only when the fitted or searched member reproduces the student's results on every probe
(``matches``), as a mutant must: other transformations of the scores (a temperature, a bias by
absolute positions) fit no member and stay unnamed."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

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
    best = min((losses[i], _GRID[i]), (fa, math.exp(a)), (fb, math.exp(b)))[1]
    return run(make(best), [probe])[0]


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


def multi_query(
    given: Sequence[Outcome], probes: Sequence[Probe], bind: Callable[[Callable], Callable]
) -> bool:
    """``given`` is multi-query attention with the shared key and value head taken from the
    first or the last d_head columns of Wk and Wv."""
    for block in ("first", "last"):
        if matches(given, trusted(("multi_query", block), bind(mut.multi_query(block)), probes)):
            return True
    return False
