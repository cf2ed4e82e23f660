"""Properties that say, in words, what is wrong with a result no catalogued mistake explains.

Each function looks at a student's result on one of the grader's own probes (public inputs, shown
in full) and returns sentences about properties every right answer has: weights whose rows sum
to 1 and lie in [0, 1], an output that is the weights times V, a result that is the right one
transposed, heads that all look alike, an output that does not change with one of its inputs,
parameter counts that ignore the bias. They state facts in words, one bit each, never a number
the student's code chose (``explain`` says why); the expected values of a probe are the grader's
own and may be named.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .compare import as_array, same_array

ROW_HINT = (
    "a softmax's rows are probabilities: each one sums to 1, so nothing may rescale or shift the "
    "weights after it (scaling belongs to the scores, before the softmax)"
)


def rows(w: Any, axis: int = -1) -> list[str]:
    """Whether the entries along ``axis`` sum to 1 and lie in [0, 1], as a softmax's must."""
    a = as_array(w)
    if a is None or a.ndim == 0 or a.size == 0 or not np.isfinite(a).all():
        return []
    found = []
    try:
        s = a.sum(axis=axis)
    except Exception:
        return []
    if not np.allclose(s, 1.0, atol=1e-6):
        above, below = bool((s > 1 + 1e-6).any()), bool((s < 1 - 1e-6).any())
        how = "more than 1" if above and not below else "less than 1" if below else "not 1"
        found.append(f"its rows do not sum to 1 (they sum to {how})")
    if (a < -1e-12).any() or (a > 1 + 1e-12).any():
        found.append("some of its entries lie outside [0, 1]")
    return found


def transposed(got: Any, want: np.ndarray) -> str:
    """'' or how ``got`` is the expected array with its axes in another order."""
    a = as_array(got)
    if a is None or a.ndim < 2 or a.ndim != want.ndim or same_array(a, want):
        return ""
    for order in itertools.permutations(range(want.ndim)):
        if order == tuple(range(want.ndim)):
            continue
        moved = np.transpose(want, order)
        if moved.shape == a.shape and same_array(a, moved):
            if order[:-2] == tuple(range(want.ndim - 2)):
                return "it is the right result transposed (its last two axes swapped)"
            return "it holds the right result with its axes in another order"
    return ""


def out_is_weights_times_v(out: Any, weights: Any, V: np.ndarray) -> str:
    """Whether an attention's out is its own weights times V (whatever the weights are)."""
    o, w = as_array(out), as_array(weights)
    if o is None or w is None or not np.isfinite(w).all():
        return ""
    try:
        product = w @ V
    except Exception:
        return ""
    if same_array(o, product):
        return ""
    return "its out is not its own weights times V (each output row averages V's rows)"


def alike_heads(weights: Any, want: np.ndarray) -> str:
    """Heads that all hold the same pattern where the reference's differ."""
    w = as_array(weights)
    if w is None or w.shape != want.shape or w.shape[0] < 2:
        return ""
    if all(same_array(w[0], w[h]) for h in range(1, w.shape[0])):
        if not all(same_array(want[0], want[h]) for h in range(1, want.shape[0])):
            return "every head has the same pattern, where heads should attend differently"
    return ""


def ignores(changed: Any, before: Any, what: str) -> str:
    """'' or that a result stayed the same when one of its inputs changed."""
    a, b = as_array(changed), as_array(before)
    if a is None or b is None or a.shape != b.shape or not same_array(a, b):
        return ""
    return f"it does not change when {what} changes, so it ignores it"


def counts(got: Any, want: dict, without_bias: dict, d_model: int) -> list[str]:
    """Parameter counts against torch's, for a probe with bias=True (shown in full)."""
    if not isinstance(got, dict) or set(got) != set(want):
        return []
    values = {int(v) if isinstance(v, int | np.integer) else v for v in got.values()}
    found = []
    if all(got[h] == without_bias[h] for h in want):
        found.append(
            "with bias=True your counts are the counts without biases: the module then also "
            f"has 4 * d_model bias parameters (3 * d_model in in_proj_bias, d_model in "
            f"out_proj.bias); for d_model = {d_model} that is {want[next(iter(want))]} in all"
        )
    elif len(values) > 1:
        found.append(
            "your counts differ between head counts, yet splitting into heads adds no parameters"
        )
    return found


def overflowed(outcome: Any) -> bool:
    """A pair (out, weights) whose weights are no softmax's: nan or inf in them, or rows that
    do not sum to 1 (exp overflowed or underflowed on large scores, however the code wrote
    its softmax)."""
    value = getattr(outcome, "value", None) if getattr(outcome, "ok", False) else None
    if not isinstance(value, tuple | list) or len(value) != 2:
        return False
    a = as_array(value[1])
    if a is None or a.ndim == 0 or a.size == 0:
        return False
    return not np.isfinite(a).all() or bool(rows(a))
