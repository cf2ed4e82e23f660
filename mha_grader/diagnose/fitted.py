"""Catalogued mistakes that are classes with a free parameter, not single examples: a cap on
the scores whatever its size (``c * tanh(s / c)`` or a clip to ``[-c, c]``, the cap fitted to
the student's weights on each probe), rotary position embeddings whatever the fraction of
each head they rotate and their base (searched). A class is named only when the fitted or
searched member reproduces the student's results on every probe (``matches``), as a mutant
must: other transformations of the scores (a temperature, biases by position such as ALiBi)
fit no member and stay unnamed."""

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
