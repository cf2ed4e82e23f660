"""split_heads' and merge_heads' catalogued mistakes."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solutions import multihead as ref


def checked(mutant: Callable) -> Callable:
    """``mutant`` with the contract's ValueError for a width other than num_heads * d_head, so
    that it stands for its one mistake only."""

    def wrapped(M, num_heads, d_head):
        if M.shape[-1] != num_heads * d_head:
            raise ValueError("M's last axis is not num_heads * d_head")
        return mutant(M, num_heads, d_head)

    wrapped.__name__ = wrapped.__qualname__ = mutant.__name__
    return wrapped


def _split_no_transpose(M, num_heads, d_head):
    return M.reshape(num_heads, M.shape[0], d_head)


def _split_interleaved(M, num_heads, d_head):
    return M.reshape(M.shape[0], d_head, num_heads).transpose(2, 0, 1)


def _split_tokens(M, num_heads, d_head):
    return np.stack(np.split(M, num_heads, axis=0))


def _split_width_inferred(M, num_heads, d_head):  # the head width from M, never compared
    return M.reshape(M.shape[0], num_heads, -1).transpose(1, 0, 2)


def _split_heads_second(M, num_heads, d_head):  # haiku's and Flax's [T, H, K], never moved
    return M.reshape(M.shape[0], num_heads, d_head)


SPLIT: dict[str, list[Callable]] = {
    "split-no-transpose": [checked(_split_no_transpose)],
    "split-interleaved": [checked(_split_interleaved)],
    "split-token-axis": [checked(_split_tokens)],
    "split-no-valueerror": [_split_width_inferred],
    "split-heads-second-axis": [checked(_split_heads_second)],
}


def _merge_no_transpose(H):
    h, n, d = H.shape
    return H.reshape(n, h * d)


def _merge_reversed(H):
    return ref.merge_heads(H[::-1])


def _merge_heads_second(H):  # reads (num_heads, n, d_head) as [T, H, K]: the last two flattened
    return H.reshape(*H.shape[:-2], -1)


MERGE: dict[str, list[Callable]] = {
    "merge-no-transpose": [_merge_no_transpose],
    "merge-reversed-heads": [_merge_reversed],
    "merge-heads-second-axis": [_merge_heads_second],
}
