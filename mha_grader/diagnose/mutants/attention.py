"""attention's catalogued mistakes, built from one recipe with a slot per choice.

A right attention swaps K's last two axes, puts the queries on the left, divides the scores by
sqrt(d_k), masks nothing, takes the softmax over the keys (axis -1) and multiplies by V. Each
mistake changes one slot; ``ATTENTION_COMBINED`` holds every two mistakes in different slots (real
code carries a rank-specific transpose and a causal mask at once, for instance). Every mutant
takes the softmax it uses as an argument, so it can be combined with a student's own.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from solutions import multihead as ref


def swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def attention_ref(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ swap(K) / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights


# -- the slots ---------------------------------------------------------------------------------

# How the right-hand operand of the scores is transposed: right, or fixed for one rank.
TRANSPOSES: dict[str, Callable] = {
    "swap": swap,
    "T": lambda a: a.T,  # reverses every axis: right for 2-D only
    "10": lambda a: np.transpose(a, (1, 0)),  # 2-D only, raises otherwise
    "swap01": lambda a: np.swapaxes(a, 0, 1),  # 2-D only, mixes axes otherwise
    "021": lambda a: np.transpose(a, (0, 2, 1)),  # 3-D only
    "swap12": lambda a: np.swapaxes(a, 1, 2),  # 3-D only
    "0132": lambda a: np.transpose(a, (0, 1, 3, 2)),  # 4-D only (swapaxes(2, 3) alike)
}


def _scale(
    scores: np.ndarray, Q: np.ndarray, K: np.ndarray, how: str, V: np.ndarray | None = None
) -> np.ndarray:
    d_k = Q.shape[-1]
    return {
        "sqrt": lambda: scores / math.sqrt(d_k),
        "none": lambda: scores,
        "d": lambda: scores / d_k,
        "times-sqrt": lambda: scores * math.sqrt(d_k),
        "sqrt-axis1": lambda: scores / math.sqrt(Q.shape[1]),  # d_k only for 2-D input
        "sqrt-m": lambda: scores / math.sqrt(K.shape[-2]),  # the number of keys
        "sqrt-n": lambda: scores / math.sqrt(Q.shape[-2]),  # the number of queries
        "sqrt-dv": lambda: scores / math.sqrt(V.shape[-1]),  # the values' width (GPT-2's)
    }[how]()


_BLOCK = 64  # a causal mask buffer cut to the sequence length, as GPT code registers one


def _mask(scores: np.ndarray, how: str | None) -> np.ndarray:
    if how is None:
        return scores
    n, m = scores.shape[-2:]
    if how == "causal":  # query i sees keys 0..i, for any n and m
        keep = np.tril(np.ones((n, m)))
    elif how == "causal-end":  # aligned on the last query and key instead of the first
        keep = np.tril(np.ones((n, m)), k=m - n)
    elif how == "causal-square":  # an (n, n) mask: cannot broadcast when n != m
        keep = np.tril(np.ones((n, n)))
    else:  # "causal-buffer": a (1, B, B) buffer cut to n, which also adds an axis to 2-D input
        keep = np.tril(np.ones((_BLOCK, _BLOCK))).reshape(1, _BLOCK, _BLOCK)[..., :n, :n]
    return np.where(keep == 0, -np.inf, scores)


def attend(
    Q,
    K,
    V,
    softmax=ref.softmax,
    *,
    transpose: str = "swap",
    order: str = "qk",
    scale: str = "sqrt",
    mask: str | None = None,
    axis: int = -1,
    product: str = "matmul",
):
    """Attention with the given choice in each slot (the defaults are the right ones)."""
    t = TRANSPOSES[transpose]
    mm = np.matmul if product == "matmul" else np.dot  # np.dot: right for 2-D only
    scores = mm(Q, t(K)) if order == "qk" else mm(K, t(Q))
    weights = softmax(_mask(_scale(scores, Q, K, scale, V), mask), axis=axis)
    return mm(weights, V), weights


def recipe(name: str, combines: bool = True, **slots) -> Callable:
    """A named mutant: ``attend`` with some slots changed. ``combines``: also tried together
    with each mistake of another slot (not when every such pair looks like one mistake alone)."""

    def mutant(Q, K, V, softmax=ref.softmax):
        return attend(Q, K, V, softmax, **slots)

    mutant.__name__ = mutant.__qualname__ = f"_att_{name}"
    mutant.changes = slots  # which slots differ from a right attention
    mutant.combines = combines
    return mutant


# -- mistakes the recipe cannot express ----------------------------------------------------------


def _att_transpose_v(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ K / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ swap(V), weights


def _att_transpose_v_dot_t(Q, K, V, softmax=ref.softmax):
    weights = softmax(Q @ K / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V.T, weights


def _att_returns_scores(Q, K, V, softmax=ref.softmax):
    scores = Q @ swap(K) / math.sqrt(Q.shape[-1])  # whisper's qk, kept for alignment heads
    return softmax(scores, axis=-1) @ V, scores


def _att_returns_raw_scores(Q, K, V, softmax=ref.softmax):
    scores = Q @ swap(K)
    return softmax(scores / math.sqrt(Q.shape[-1]), axis=-1) @ V, scores


# -- caps on the scores: monotone, near the identity for small scores, flat for large ones -------

CAPS: dict[str, Callable] = {
    "tanh": lambda s, c: c * np.tanh(s / c),  # Gemma 2's attn_logit_softcapping, Grok's
    "clip": lambda s, c: np.clip(s, -c, c),
}


def capped(cap: float, how: str = "tanh") -> Callable:
    """Attention whose scaled scores go through a cap ``cap`` (``CAPS[how]``) before the
    softmax."""

    def mutant(Q, K, V, softmax=ref.softmax):
        scores = CAPS[how](Q @ swap(K) / math.sqrt(Q.shape[-1]), cap)
        weights = softmax(scores, axis=-1)
        return weights @ V, weights

    mutant.__name__ = mutant.__qualname__ = f"_att_{how}_cap_{cap:g}"
    mutant.cap = (how, cap)
    return mutant


ATTENTION: dict[str, list[Callable]] = {
    "scale-missing": [recipe("unscaled", scale="none")],
    "scale-not-sqrt": [recipe("by_dk", scale="d")],
    "scale-inverted": [recipe("times_sqrt_dk", scale="times-sqrt")],
    # a token count: equal to d_k on some probes, so together with a mistake of another slot it
    # could look like another pair: never combined
    "scale-seq-len": [
        recipe("by_sqrt_m", combines=False, scale="sqrt-m"),
        recipe("by_sqrt_n", combines=False, scale="sqrt-n"),
    ],
    "attention-transpose-v": [_att_transpose_v, _att_transpose_v_dot_t],
    "attention-3d-transpose": [
        recipe("k_dot_t", transpose="T"),
        recipe("np_dot_k_t", transpose="T", product="dot"),
    ],
    "attention-fixed-rank": [
        recipe(f"k_{t}", transpose=t) for t in ("10", "swap01", "021", "swap12", "0132")
    ]
    + [recipe(f"softmax_axis{a}", axis=a) for a in (1, 2)]
    # d_k read from axis 1: wrong from 3-D on, where K.T already fails, so never combined
    + [recipe("scale_by_axis1", combines=False, scale="sqrt-axis1")],
    "attention-scores-kq": [recipe("kq", order="kq")],
    "attention-returns-scores": [_att_returns_scores, _att_returns_raw_scores],
    # the cap of Gemma 2's attention and Grok's; other caps are fitted (diagnose.fitted)
    "attention-logit-softcap": [capped(50.0), capped(30.0)],
    # equal to d_k on some probes, as the token counts above: never combined
    "scale-d-v": [recipe("by_sqrt_dv", combines=False, scale="sqrt-dv")],
    "attention-causal-mask": [
        recipe(f"{m.replace('-', '_')}", mask=m)
        for m in ("causal", "causal-end", "causal-square", "causal-buffer")
    ],
}


def _combined() -> dict[tuple[str, ...], list[Callable]]:
    """Every two catalogued mistakes in different slots, as one mutant."""
    singles = [
        (mid, f) for mid, fs in ATTENTION.items() for f in fs if getattr(f, "combines", False)
    ]
    found: dict[tuple[str, ...], list[Callable]] = {}
    for (a, fa), (b, fb) in itertools.combinations(singles, 2):
        if a == b or set(fa.changes) & set(fb.changes):
            continue
        name = f"{fa.__name__.removeprefix('_att_')}_{fb.__name__.removeprefix('_att_')}"
        found.setdefault((a, b), []).append(recipe(name, **fa.changes, **fb.changes))
    return found


ATTENTION_COMBINED: dict[tuple[str, ...], list[Callable]] = _combined()
