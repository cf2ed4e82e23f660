"""Each catalogued mistake implemented as a mutant of the reference (trusted side only).

One table per question, id -> mutants (``SOFTMAX``, ``SPLIT``, ``MERGE``, ``ATTENTION``,
``MHA``, ``DISTINCT``, ``COUNTS``, ``ADAPTER``; ``CROSS_CHECK`` holds keyword arguments of
``cross_check_with``), plus the two-mistake tables ``SOFTMAX_COMBINED`` and
``ATTENTION_COMBINED``. Functions that call other contract functions take those callees as
arguments, so a mutant can be combined with the student's own callees (to tell where a bug
lives) or with the reference ones.
"""

from __future__ import annotations

from .attention import (
    ATTENTION,
    ATTENTION_COMBINED,
    CAPS,
    attend,
    attention_ref,
    capped,
    recipe,
    swap,
)
from .counts import COUNTS, DISTINCT
from .heads import MERGE, SPLIT
from .mha import (
    INLINE_AS_MHA,
    MHA,
    alibi,
    checked,
    mha_capped,
    mha_ref,
    multi_query,
    per_head,
    rotary,
)
from .softmax import LARGE_ONLY, SOFTMAX, SOFTMAX_COMBINED
from .torch_side import (
    ADAPTER,
    CROSS_CHECK,
    RELATIVE,
    cross_check_with,
    torch_blocks,
    torch_forward,
)

__all__ = [
    "ADAPTER",
    "ATTENTION",
    "ATTENTION_COMBINED",
    "CAPS",
    "COUNTS",
    "CROSS_CHECK",
    "DISTINCT",
    "INLINE_AS_MHA",
    "LARGE_ONLY",
    "MERGE",
    "MHA",
    "RELATIVE",
    "SOFTMAX",
    "SOFTMAX_COMBINED",
    "SPLIT",
    "alibi",
    "attend",
    "attention_ref",
    "capped",
    "checked",
    "cross_check_with",
    "mha_capped",
    "mha_ref",
    "multi_query",
    "per_head",
    "recipe",
    "rotary",
    "swap",
    "torch_blocks",
    "torch_forward",
]
