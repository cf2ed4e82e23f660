"""softmax's catalogued mistakes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solutions import multihead as ref


def _sm_no_shift(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _sm_max_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)


def _sm_sum_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def _sm_both_no_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)


def _sm_sum_no_keepdims_no_shift(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis)


def _sm_last_axis_appended(x, axis=-1):  # [..., None] always restores the *last* axis
    e = np.exp(x - x.max(axis=axis)[..., None])
    return e / e.sum(axis=axis)[..., None]


def _sm_global(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def _sm_row_shift_global_sum(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()


def _sm_axis0(x, axis=-1):
    return ref.softmax(x, axis=0)


def _sm_queries(x, axis=-1):  # in attention: normalised over the queries instead of the keys
    return ref.softmax(x, axis=-2)


def _sm_transposed_division(x, axis=-1):
    """The blog idiom: divide the transposed exponentials by the last axis' sums and transpose
    back. It ignores ``axis`` and lines up only for 1-D and 2-D input."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e.T / e.sum(axis=-1)).T


def _sm_transposed_division_no_shift(x, axis=-1):
    return (np.exp(x).T / np.exp(x).sum(axis=-1)).T


def _sm_global_max(x, axis=-1):
    """The Stack Overflow answer: one shift for the whole array (np.max(x)), the sum along
    ``axis``. Right wherever no slice lies far below the largest entry."""
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)


SOFTMAX: dict[str, list[Callable]] = {
    "softmax-wrong-axis": [_sm_queries, _sm_axis0, _sm_transposed_division],
    "softmax-unstable": [_sm_no_shift],
    "softmax-no-keepdims": [
        _sm_max_no_keepdims,
        _sm_sum_no_keepdims,
        _sm_both_no_keepdims,
        _sm_last_axis_appended,
    ],
    "softmax-global": [_sm_global, _sm_row_shift_global_sum],
    "softmax-global-max": [_sm_global_max],
}

# The mistakes that give a softmax's values on moderate scores and differ on large ones only.
LARGE_ONLY: tuple[str, ...] = ("softmax-unstable", "softmax-global-max")


# Two mistakes at once that a single mutant cannot stand for (the shift changes the numbers).
SOFTMAX_COMBINED: dict[tuple[str, ...], list[Callable]] = {
    ("softmax-no-keepdims", "softmax-unstable"): [_sm_sum_no_keepdims_no_shift],
    ("softmax-wrong-axis", "softmax-unstable"): [_sm_transposed_division_no_shift],
}
