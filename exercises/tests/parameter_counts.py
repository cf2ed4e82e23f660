"""Public checks for parameter_counts(d_model, head_counts, bias=False).

The expected counts come from the shapes alone: four d_model x d_model projections (Wq, Wk, Wv,
Wo), plus one bias of length d_model each when bias=True.
"""

from otter.test_files import test_case

name = "parameter_counts"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _check(parameter_counts, d_model, heads, bias, expected):
    what = f"parameter_counts({d_model}, {heads}, bias={bias})"
    result = parameter_counts(d_model, list(heads), bias=bias)
    assert isinstance(result, dict), f"{what} must return a dict {{h: count}}; got {result!r:.80}"
    assert sorted(result) == sorted(heads), (
        f"{what} must have one key per head count, {sorted(heads)}; got keys {sorted(result)}"
    )
    if any(result[h] != expected for h in heads):
        hint = ""
        if len({result[h] for h in heads}) > 1:
            hint = (
                " Your counts change with the number of heads, but the projections are "
                "d_model x d_model whatever the head count: splitting into heads is a reshape."
            )
        elif bias and all(result[h] == 4 * d_model * d_model for h in heads):
            hint = " That is the count without biases: is bias passed on to the module?"
        elif (
            not bias
            and all(isinstance(result[h], int) for h in heads)
            and len({result[h] - expected for h in heads}) == 1
        ):
            extra = result[heads[0]] - expected
            if extra > 0 and extra % d_model == 0 and extra // d_model <= 4:
                hint = (
                    f" That is {extra // d_model} * d_model too many: biases counted although "
                    "bias is False (the module then has none, out_proj's included)."
                )
        raise AssertionError(
            f"{what} should be {expected} for every head count (4 matrices of {d_model} x "
            f"{d_model}{' plus 4 biases' if bias else ''}); got {result}.{hint}"
        )


@test_case()
@kinds("bias=False")
def test_module_example(parameter_counts):
    _check(parameter_counts, 8, [1, 2, 4, 8], False, 4 * 8 * 8)


@test_case()
@kinds("bias=True")
def test_with_bias(parameter_counts):
    _check(parameter_counts, 8, [1, 2], True, 4 * 8 * 8 + 4 * 8)


@test_case()
@kinds("bias=False")
def test_other_width(parameter_counts):
    _check(parameter_counts, 6, [1, 2, 3, 6], False, 4 * 6 * 6)


@test_case()
@kinds("bias left to its default, False")
def test_bias_defaults_to_false(parameter_counts):
    result = parameter_counts(6, [3, 6])
    assert result == {3: 4 * 6 * 6, 6: 4 * 6 * 6}, (
        "parameter_counts's bias defaults to False (torch.nn.MultiheadAttention's own default "
        "is True: pass bias on to the module), so parameter_counts(6, [3, 6]) should be "
        f"{{3: 144, 6: 144}} (4 matrices of 6 x 6, no biases); got {result!r:.80}"
    )


@test_case()
@kinds("head counts given as a generator")
def test_any_iterable_of_head_counts(parameter_counts):
    result = parameter_counts(4, (h for h in [1, 2]))  # a generator can be read only once
    assert result == {1: 64, 2: 64}, (
        "head_counts may be any iterable, also a generator, which can be read only once: turn it "
        f"into a list first if you go over it twice. parameter_counts(4, <generator of 1, 2>) "
        f"should be {{1: 64, 2: 64}}; got {result!r:.80}"
    )


@test_case()
@kinds("ValueError naming a head count that does not divide d_model")
def test_head_count_that_does_not_divide_raises(parameter_counts):
    try:
        result = parameter_counts(8, [2, 3])
    except ValueError as e:
        assert "3" in str(e), (
            f"the ValueError must name the head count that does not divide d_model = 8 (3); "
            f"its message was {str(e)!r:.120}"
        )
        return
    except AssertionError as e:  # torch's own check, raised from inside the module's constructor
        raise AssertionError(
            "parameter_counts(8, [2, 3]) let torch fail with an AssertionError "
            f"({str(e)[:80]}): check every head count yourself first and raise ValueError "
            "naming the one that does not divide d_model."
        ) from e
    raise AssertionError(
        "3 heads cannot split d_model = 8 into equal parts: parameter_counts(8, [2, 3]) must raise "
        f"ValueError naming 3; it returned {result!r:.80}"
    )
