"""Hidden tests for merge_heads(H). Trusted side only."""

from functools import cache

import numpy as np
from otter.test_files import test_case

from mha_grader.grading import checks
from solutions import multihead as ref

name = "merge_heads"
AXES = ("token", "feature")


@cache
def _heads(seed: int, shape: tuple[int, int, int], dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@cache
def _expected(*key) -> np.ndarray:
    return ref.merge_heads(_heads(*key))


def _check(merge_heads, *key) -> None:
    """key: the arguments of _heads, which makes (and caches) the input."""
    result = merge_heads(_heads(*key))
    checks.check_close(result, _expected(*key), "merge_heads(H)", "(n, num_heads * d_head)", AXES)


@test_case(name="n != d_head: heads are concatenated in order along the features, H unmodified")
@checks.kinds("n != d_head", "the input left unmodified")
def tokens_differ_from_head_width(merge_heads):
    _check(merge_heads, 301, (3, 5, 2))
    checks.check_unmodified(merge_heads, "merge_heads(H)")


@test_case(name="n == d_head: the head axis moves next to the features")
@checks.kinds("n == d_head")
def tokens_equal_head_width(merge_heads):
    _check(merge_heads, 302, (2, 4, 4))


@test_case(name="four heads on two tokens")
@checks.kinds("more heads than tokens")
def many_heads(merge_heads):
    _check(merge_heads, 303, (4, 2, 3))


@test_case(name="float32 heads keep their values and order")
@checks.kinds("float32 heads")
def float32_heads(merge_heads):
    _check(merge_heads, 304, (2, 3, 5), np.float32)
