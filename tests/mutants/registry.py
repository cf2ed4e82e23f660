"""How the bug modules declare a submission: a decorator that records what it should get."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Which contract functions call which (transitively): a bug costs its function and its callers.
CALLERS: dict[str, tuple[str, ...]] = {
    "softmax": ("softmax", "attention", "multi_head_attention", "cross_check"),
    "split_heads": ("split_heads", "multi_head_attention", "cross_check"),
    "merge_heads": ("merge_heads", "multi_head_attention", "cross_check"),
    "attention": ("attention", "multi_head_attention", "cross_check"),
    "multi_head_attention": ("multi_head_attention", "cross_check"),
    "weights_from_torch": ("weights_from_torch", "cross_check"),
    "cross_check": ("cross_check",),
    "distinct_head_pairs": ("distinct_head_pairs",),
    "parameter_counts": ("parameter_counts",),
}


@dataclass(frozen=True)
class Entry:
    func: Callable
    ids: tuple[str, ...]  # misconception ids it must carry (empty: none)
    blame: str | None  # the function the bug is in
    affects: tuple[str, ...]  # questions that must lose points


ENTRIES: list[Entry] = []


def bug(*ids: str, affects: tuple[str, ...] | None = None) -> Callable:
    """A buggy version of the contract function named by the part of its name before '__'."""

    def wrap(func: Callable) -> Callable:
        target = func.__name__.split("__")[0]
        ENTRIES.append(Entry(func, ids, target, affects or CALLERS[target]))
        return func

    return wrap


def correct(func: Callable) -> Callable:
    """A correct alternative: no question may lose points or get a tag."""
    ENTRIES.append(Entry(func, (), None, ()))
    return func
