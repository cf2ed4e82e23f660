"""distinct_head_pairs' and parameter_counts' catalogued mistakes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _pairs_allclose(weights, atol=1e-6):
    h = len(weights)
    return [
        (i, j)
        for i in range(h)
        for j in range(i + 1, h)
        if not np.allclose(weights[i], weights[j], atol=atol)
    ]


DISTINCT: dict[str, list[Callable]] = {"pairs-relative-tolerance": [_pairs_allclose]}


def _counts_without_bias(d_model, head_counts, bias=False):
    head_counts = list(head_counts)
    bad = [h for h in head_counts if d_model % h]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    return {h: 4 * d_model * d_model for h in head_counts}


def _counts_torch_assert(d_model, head_counts, bias=False):
    import torch

    counts = {}
    for h in head_counts:  # torch's own check: AssertionError for a head count that does not fit
        module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in module.parameters())
    return counts


COUNTS: dict[str, list[Callable]] = {
    "counts-ignore-bias": [_counts_without_bias],
    "counts-no-valueerror": [_counts_torch_assert],
}
