"""Public checks for merge_heads(H). The hidden tests use other inputs."""

import numpy as np
from otter.test_files import test_case

name = "merge_heads"
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


def _diagnose(out, H):
    """Name the classic mistake an output of the right shape shows, or return ''."""
    num_heads, n, d_head = H.shape
    if np.array_equal(out, H.reshape(n, num_heads * d_head)):
        if n == num_heads:  # the last two axes flattened as if H were (n, num_heads, d_head)
            return (
                " The rows mix tokens: H was reshaped without moving the head axis, either "
                "straight to (n, d_model) or by flattening its last two axes as if it were "
                "(n, num_heads, d_head) (with n == num_heads, as here, both give these numbers). "
                "Move the head axis next to d_head first (to (n, num_heads, d_head)), then "
                "reshape."
            )
        return (
            " The rows mix tokens: a plain reshape of (num_heads, n, d_head) to (n, d_model) "
            "gives the right shape but puts head 0's tokens side by side. Move the head axis "
            "next to d_head first (to (n, num_heads, d_head)), then reshape."
        )
    if np.array_equal(out[:, :d_head], H[-1]):
        return " The heads come out in reverse order: head 0 must fill the first d_head columns."
    return ""


@test_case()
@kinds("n == d_head")
def test_worked_values(merge_heads):
    H = np.array([[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]])  # 2 heads, 2 tokens
    out = merge_heads(H)
    assert isinstance(out, np.ndarray), f"expected a NumPy array, got {_show(out)}"
    assert out.shape == (2, 4), f"expected shape (n, num_heads*d_head) = (2, 4), got {_show(out)}"
    assert np.array_equal(out, [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]), (
        "merging head 0 = [[1, 2], [5, 6]] and head 1 = [[3, 4], [7, 8]] should give each token "
        "its heads side by side: [[1, 2, 3, 4], [5, 6, 7, 8]]; got "
        + _show(out)
        + "."
        + _diagnose(out, H)
    )


@test_case()
@kinds("n != d_head")
def test_shape_and_column_blocks(merge_heads):
    num_heads, n, d_head = 2, 3, 4  # all different, so shapes tell them apart
    H = np.arange(num_heads * n * d_head, dtype=float).reshape(num_heads, n, d_head)
    out = merge_heads(H)
    assert isinstance(out, np.ndarray), f"expected a NumPy array, got {_show(out)}"
    assert out.shape == (n, num_heads * d_head), (
        f"H of shape (num_heads, n, d_head) = (2, 3, 4) must become (n, num_heads*d_head) = "
        f"(3, 8); got {_show(out)}"
    )
    for h in range(num_heads):
        cols = out[:, h * d_head : (h + 1) * d_head]
        assert np.array_equal(cols, H[h]), (
            f"columns {h * d_head}:{(h + 1) * d_head} must hold head {h}, H[{h}]; they hold "
            f"{_show(cols)}." + _diagnose(out, H)
        )


@test_case()
@kinds("more heads than tokens")
def test_undoes_a_split(merge_heads):
    # Split by hand, as the contract defines it: head h is the column block h*d:(h+1)*d.
    n, num_heads, d_head = 2, 3, 4  # more heads than tokens
    M = np.arange(n * num_heads * d_head, dtype=float).reshape(n, num_heads * d_head) ** 1.5
    H = np.stack([M[:, h * d_head : (h + 1) * d_head] for h in range(num_heads)])
    out = merge_heads(H)
    assert isinstance(out, np.ndarray) and out.shape == M.shape, (
        f"merging 3 heads of shape (2, 4) must give shape (2, 12); got {_show(out)}"
    )
    assert np.allclose(out, M), (
        "merge_heads must undo split_heads: merging the column blocks of M must give M back; "
        f"got {_show(out)} instead of {_show(M)}." + _diagnose(out, H)
    )


@test_case()
@kinds("float32 heads")
def test_float32_heads(merge_heads):
    H = (np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2) / 8).astype(np.float32)
    out = merge_heads(H)
    assert isinstance(out, np.ndarray) and out.shape == (3, 4), (
        f"float32 heads H of shape (2, 3, 2) must become shape (3, 4); got {_show(out)}"
    )
    assert out.dtype in (np.float32, np.float64), (
        f"float32 heads may come back as float32 or float64; got {_show(out)}"
    )
    assert np.array_equal(out, np.concatenate([H[0], H[1]], axis=1)), (
        f"merging keeps every value as it was (float32 included): head 0 fills columns 0:2, "
        f"head 1 columns 2:4; got {_show(out)}." + _diagnose(out, H)
    )


@test_case()
@kinds("the input left unmodified")
def test_input_is_not_modified(merge_heads):
    H = np.arange(12, dtype=float).reshape(2, 3, 2)
    before = H.copy()
    merge_heads(H)
    assert np.array_equal(H, before), (
        f"merge_heads changed its input H in place: it was {_show(before)}, afterwards {_show(H)}"
    )
