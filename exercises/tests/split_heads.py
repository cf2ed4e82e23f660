"""Public checks for split_heads(M, num_heads, d_head). The hidden tests use other inputs."""

import numpy as np
from otter.test_files import test_case

name = "split_heads"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _show(x):
    """What a value is, for a message: type, shape, dtype and a short excerpt."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, precision=3, threshold=8, edgeitems=2).replace("\n", "")
        return f"a {x.dtype} array of shape {x.shape}: {text}"
    if x is None:
        return "None (is a `return` missing?)"
    return f"a {type(x).__name__}: {str(x)[:80]}"


def _diagnose(out, M, num_heads, d_head):
    """Name the classic mistake an output of the right shape shows, or return ''."""
    n = M.shape[0]
    if np.array_equal(out, M.reshape(num_heads, n, d_head)):
        if n == num_heads:  # (n, num_heads, d_head) left as it is gives the same numbers here
            return (
                " Head 0 holds rows of several tokens: M was reshaped without moving any axis, "
                "either straight to (num_heads, n, d_head) or to (n, num_heads, d_head) with the "
                "head axis left second (with n == num_heads, as here, both give these numbers). "
                "Reshape to (n, num_heads, d_head) first, then move the head axis to the front."
            )
        return (
            " Head 0 holds rows of several tokens: a plain reshape to (num_heads, n, d_head) "
            "gives the right shape but cuts the rows in the wrong places. Reshape to "
            "(n, num_heads, d_head) first, then move the head axis to the front."
        )
    if np.array_equal(out[0], M[:, ::num_heads]):
        return (
            " Head 0 got every num_heads-th feature (0, 2, 4, ...): the features were dealt out "
            "round-robin. Head h must get the block of consecutive columns h*d_head:(h+1)*d_head."
        )
    return ""


@test_case()
@kinds("n == d_head")
def test_worked_values(split_heads):
    M = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])  # 2 tokens, 2 heads of width 2
    out = split_heads(M, 2, 2)
    expected = np.array([[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]])
    assert isinstance(out, np.ndarray), f"expected a NumPy array, got {_show(out)}"
    assert out.shape == (2, 2, 2), f"expected shape (2, 2, 2), got {_show(out)}"
    assert np.array_equal(out, expected), (
        "split_heads([[1, 2, 3, 4], [5, 6, 7, 8]], 2, 2) should give head 0 = [[1, 2], [5, 6]] "
        "(the first two features of each token) and head 1 = [[3, 4], [7, 8]]; got "
        f"{_show(out)}." + _diagnose(out, M, 2, 2)
    )


@test_case()
@kinds("n != d_head")
def test_shape_and_head_blocks(split_heads):
    n, num_heads, d_head = 3, 2, 4  # n, num_heads and d_head all differ, so shapes tell them apart
    M = np.arange(n * num_heads * d_head, dtype=float).reshape(n, num_heads * d_head)
    out = split_heads(M, num_heads, d_head)
    assert isinstance(out, np.ndarray), f"expected a NumPy array, got {_show(out)}"
    if out.shape == (n, num_heads, d_head):
        raise AssertionError(
            "for M of shape (3, 8) with 2 heads of width 4 the result must have shape "
            "(num_heads, n, d_head) = (2, 3, 4); got (3, 2, 4) = (n, num_heads, d_head): "
            "the head axis still has to move to the front."
        )
    assert out.shape == (num_heads, n, d_head), (
        f"for M of shape (3, 8) with 2 heads of width 4 the result must have shape "
        f"(num_heads, n, d_head) = (2, 3, 4); got {_show(out)}"
    )
    for h in range(num_heads):
        block = M[:, h * d_head : (h + 1) * d_head]
        assert np.array_equal(out[h], block), (
            f"head {h} must be M[:, {h * d_head}:{(h + 1) * d_head}] (columns {h * d_head} to "
            f"{(h + 1) * d_head - 1} of every token); got {_show(out[h])}."
            + _diagnose(out, M, num_heads, d_head)
        )


@test_case()
@kinds("more heads than tokens")
def test_more_heads_than_tokens(split_heads):
    M = np.arange(12, dtype=float).reshape(2, 6)  # 2 tokens, 3 heads of width 2
    out = split_heads(M, 3, 2)
    assert isinstance(out, np.ndarray) and out.shape == (3, 2, 2), (
        f"with 3 heads of width 2, M of shape (2, 6) becomes shape (num_heads, n, d_head) = "
        f"(3, 2, 2); got {_show(out)}"
    )
    for h in range(3):
        assert np.array_equal(out[h], M[:, 2 * h : 2 * h + 2]), (
            f"head {h} must be M[:, {2 * h}:{2 * h + 2}], even with more heads than tokens; got "
            f"{_show(out[h])}." + _diagnose(out, M, 3, 2)
        )


@test_case()
@kinds("one head")
def test_one_head_is_the_whole_matrix(split_heads):
    M = np.arange(6, dtype=float).reshape(3, 2)
    out = split_heads(M, 1, 2)
    assert isinstance(out, np.ndarray) and out.shape == (1, 3, 2), (
        f"with one head of width 2, M of shape (3, 2) becomes shape (1, 3, 2); got {_show(out)}"
    )
    assert np.array_equal(out[0], M), f"with one head, head 0 is M itself; got {_show(out[0])}"


@test_case()
@kinds("ValueError: M's width is not num_heads * d_head", "ValueError: a reshape would not fail")
def test_wrong_width_raises_value_error(split_heads):
    M = np.zeros((3, 8))
    for num_heads, d_head in [(3, 2), (2, 3), (4, 4)]:
        try:
            out = split_heads(M, num_heads, d_head)
        except ValueError:
            continue
        raise AssertionError(
            f"M has 8 features but num_heads*d_head = {num_heads}*{d_head} = "
            f"{num_heads * d_head}: split_heads must raise ValueError, and it returned "
            f"{_show(out)}. Check M.shape[-1] against num_heads * d_head first."
        )


@test_case()
@kinds("the input left unmodified")
def test_input_is_not_modified(split_heads):
    M = np.arange(12, dtype=float).reshape(3, 4)
    before = M.copy()
    split_heads(M, 2, 2)
    assert np.array_equal(M, before), (
        f"split_heads changed its input M in place: it was {_show(before)}, afterwards "
        f"{_show(M)}. Do not modify the array you were given (assigning to M.shape reshapes the "
        "caller's array itself): take a reshaped view or a new array instead."
    )
