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


def _heads(d_model, head_counts) -> list:
    """The head counts, once the contract's ValueError is raised for any that does not divide
    d_model (every count mistake below checks that part right)."""
    head_counts = list(head_counts)
    bad = [h for h in head_counts if d_model % h]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    return head_counts


def _counts_without_bias(d_model, head_counts, bias=False):
    head_counts = _heads(d_model, head_counts)
    return {h: 4 * d_model * d_model for h in head_counts}


def _counts_torch_assert(d_model, head_counts, bias=False):
    import torch

    counts = {}
    for h in head_counts:  # torch's own check: AssertionError for a head count that does not fit
        module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in module.parameters())
    return counts


def _counts_wide(per_head: int, biases_per_head: int = 3) -> Callable:
    """Counts where ``per_head`` of the four d_model x d_model matrices come once per head (each
    head with full-width projections of its own), the others once: right for one head only.
    With bias, ``biases_per_head`` of the four d_model-wide biases come once per head."""

    def counts(d_model, head_counts, bias=False):
        head_counts = _heads(d_model, head_counts)
        found = {}
        for h in head_counts:
            n = (per_head * h + 4 - per_head) * d_model * d_model
            if bias:
                n += (biases_per_head * h + 4 - biases_per_head) * d_model
            found[h] = n
        return found

    counts.__name__ = counts.__qualname__ = f"_counts_wide_{per_head}_{biases_per_head}"
    return counts


def _counts_some_bias(biases: int) -> Callable:
    """Counts with ``biases`` of the four d_model-wide biases when bias=True (whisper's key
    projection has none: three)."""

    def counts(d_model, head_counts, bias=False):
        head_counts = _heads(d_model, head_counts)
        return {h: 4 * d_model * d_model + (biases * d_model if bias else 0) for h in head_counts}

    counts.__name__ = counts.__qualname__ = f"_counts_{biases}_biases"
    return counts


def _counts_always_bias(d_model, head_counts, bias=False):
    """The four d_model-wide biases counted whatever ``bias`` says (Megatron's
    add_bias_linear, on by default; a module built without passing ``bias``)."""
    head_counts = _heads(d_model, head_counts)
    return {h: 4 * d_model * d_model + 4 * d_model for h in head_counts}


def _counts_multi_query(with_bias: bool = True) -> Callable:
    """Falcon's multi-query layer: queries and output d_model x d_model, one key and one value
    head of width d_model / h (2 d^2 + 2 d^2 / h), with their biases when bias=True, or without
    (``with_bias`` False): right for one head only."""

    def counts(d_model, head_counts, bias=False):
        head_counts = _heads(d_model, head_counts)
        found = {}
        for h in head_counts:
            kv = 2 * (d_model // h)
            found[h] = d_model * (2 * d_model + kv)
            if bias and with_bias:
                found[h] += 2 * d_model + kv
        return found

    counts.__name__ = counts.__qualname__ = f"_counts_multi_query_{with_bias}"
    return counts


COUNTS: dict[str, list[Callable]] = {
    "counts-ignore-bias": [_counts_without_bias],
    # q, k, v (and the output) per head; biases of q, k, v per head, or of all four
    "counts-wide-heads": [_counts_wide(4), _counts_wide(4, 4), _counts_wide(3)],
    "counts-no-valueerror": [_counts_torch_assert],
    # some of the biases: q, k, v without the output's, or one of q, k, v left out (3), or the
    # output's alone (1)
    "counts-bias-partial": [_counts_some_bias(3), _counts_some_bias(1)],
    "counts-always-bias": [_counts_always_bias],
    # one shared key and value head (Falcon's multi_query), with its biases or without them
    "counts-multi-query": [_counts_multi_query(), _counts_multi_query(False)],
}
