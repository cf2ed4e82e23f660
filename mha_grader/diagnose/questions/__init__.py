"""One small diagnosis module per code question; each has ``diagnose(session)``."""

from __future__ import annotations

from types import ModuleType

from . import (
    attention,
    cross_check,
    distinct_head_pairs,
    merge_heads,
    multi_head_attention,
    parameter_counts,
    softmax,
    split_heads,
    weights_from_torch,
)

MODULES: dict[str, ModuleType] = {
    "softmax": softmax,
    "split_heads": split_heads,
    "merge_heads": merge_heads,
    "attention": attention,
    "multi_head_attention": multi_head_attention,
    "distinct_head_pairs": distinct_head_pairs,
    "parameter_counts": parameter_counts,
    "weights_from_torch": weights_from_torch,
    "cross_check": cross_check,
}
