"""Hidden tests for parameter_counts(d_model, head_counts, bias=False). Trusted side only."""

from functools import cache

from otter.test_files import test_case

from mha_grader import shown
from mha_grader.grading import checks
from mha_grader.sandbox.worker.wire import Once
from solutions import multihead as ref

name = "parameter_counts"


@cache
def _expected(d_model: int, head_counts: tuple[int, ...], bias: bool) -> dict[int, int]:
    return ref.parameter_counts(d_model, head_counts, bias=bias)


def _check(counts, d_model: int, head_counts: tuple[int, ...], bias: bool) -> None:
    expected = _expected(d_model, head_counts, bias)
    call = f"parameter_counts(d_model, head_counts, bias={bias})"
    if type(counts) is not dict:
        raise AssertionError(
            f"{call} should return a dict {{h: count}}; your code returned "
            f"{checks.describe(counts)}."
        )
    keys = {checks.check_int(k, "each key (a head count)") for k in counts}
    if keys != set(expected) or len(counts) != len(expected):
        raise AssertionError(
            f"the keys of {call} should be exactly the head counts asked for, one each; yours "
            f"has {shown.count(len(counts))} key(s), and "
            f"{shown.count(len(keys ^ set(expected)))} differ from them."
        )
    wrong = [h for h, c in counts.items() if checks.check_int(c, "each count") != expected[int(h)]]
    if wrong:
        raise AssertionError(
            f"{call}: {shown.count(len(wrong))} of the counts differ from the number of "
            f"parameters of torch.nn.MultiheadAttention(d_model, h, bias={bias}). Count every "
            "tensor in .parameters() with .numel()."
        )


@test_case(name="bias=False: the count is the same for every head count")
@checks.kinds("bias=False")
def without_bias(parameter_counts):
    _check(parameter_counts(10, [1, 2, 5, 10], bias=False), 10, (1, 2, 5, 10), False)


@test_case(name="bias=True counts the biases too")
@checks.kinds("bias=True")
def with_bias(parameter_counts):
    heads = (1, 2, 3, 4, 6, 12)
    _check(parameter_counts(12, list(heads), bias=True), 12, heads, True)


@test_case(name="bias defaults to False")
@checks.kinds("bias left to its default, False")
def default_bias(parameter_counts):
    _check(parameter_counts(16, [16, 2, 4]), 16, (16, 2, 4), False)


@test_case(name="head_counts given as a generator, which can be read only once")
@checks.kinds("head counts given as a generator")
def generator_of_head_counts(parameter_counts):
    # Once(...) reaches the student's function as a generator (bias given explicitly, so that a
    # wrong default is not charged again here).
    _check(parameter_counts(20, Once((4, 1, 20, 5)), bias=False), 20, (4, 1, 20, 5), False)


@test_case(name="ValueError naming a head count that does not divide d_model; counts otherwise")
@checks.kinds("ValueError naming a head count that does not divide d_model")
def indivisible(parameter_counts):
    # A refusal counts only beside a right answer: raising whatever the input earns nothing
    # (bias given explicitly, so that a wrong default is not charged again here).
    _check(parameter_counts(12, [2, 3, 6], bias=False), 12, (2, 3, 6), False)
    checks.expect_value_error(
        lambda: parameter_counts(12, [2, 5, 3]),
        "when a head count does not divide d_model",
        must_mention=["5"],
    )
