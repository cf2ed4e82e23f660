"""Public checks for attention(Q, K, V). The hidden tests use other inputs and more cases."""

import numpy as np
from otter.test_files import test_case

name = "attention"
OK_FORMAT = False  # otter: this file uses the exception-based format, not OK


def kinds(*behaviours):
    """What a check tests. The hidden tests check each of these behaviours too, on other inputs,
    and test nothing else."""

    def mark(check):
        check.kinds = behaviours
        return check

    return mark


def _close(a, b):
    """Whether two of your results agree up to float32 rounding (about 7 digits): these checks
    look for a mix-up of axes or heads, which is far larger, and a right implementation may
    compute in float32 (grading's tolerances follow the dtype too)."""
    return np.allclose(a, b, rtol=1e-4, atol=1e-6)


def _within_float32(a, b):
    """Whether a float32 result is the float64 one to float32 precision, as grading compares:
    within 1e-4 of the largest magnitude of the float64 result."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.abs(a - b).max() <= 1e-4 * np.abs(b).max())


def _show(x):
    """What a value is, for a message: type, shape, dtype and a short excerpt."""
    if isinstance(x, np.ndarray):
        text = np.array2string(x, precision=3, threshold=8, edgeitems=2).replace("\n", "")
        return f"a {x.dtype} array of shape {x.shape}: {text}"
    if x is None:
        return "None (is a `return` missing?)"
    if isinstance(x, tuple | list):
        return f"a {type(x).__name__} of {len(x)}: " + ", ".join(_show(v) for v in x[:3])
    return f"a {type(x).__name__}: {str(x)[:80]}"


def _call(attention, Q, K, V, what):
    """Call attention and check it returns (out, weights) with the contract's shapes."""
    result = attention(Q, K, V)
    assert isinstance(result, tuple) and len(result) == 2, (
        f"attention must return a tuple (out, weights); for {what} it returned {_show(result)}"
    )
    out, weights = result
    *lead, n, _ = Q.shape
    m, d_v = V.shape[-2:]
    want_out, want_w = (*lead, n, d_v), (*lead, n, m)
    shapes = (getattr(out, "shape", None), getattr(weights, "shape", None))
    if want_out != want_w and shapes == (want_w, want_out):
        raise AssertionError(
            f"for {what} the result must be (out, weights) in that order; yours looks like "
            "(weights, out)."
        )
    assert isinstance(out, np.ndarray) and out.shape == want_out, (
        f"for {what} out must have shape (..., n, d_v) = {want_out}; got {_show(out)}"
    )
    keys_first = (*lead, m, n)
    if n != m and isinstance(weights, np.ndarray) and weights.shape == keys_first:
        raise AssertionError(
            f"for {what} weights must have shape (..., n, m) = {want_w}; yours are {keys_first}, "
            "keys before queries (one column per query, as some books write it): hand them back "
            "with one row per query, its weights over the keys along the last axis."
        )
    assert isinstance(weights, np.ndarray) and weights.shape == want_w, (
        f"for {what} weights must have shape (..., n, m) = {want_w}; got {_show(weights)}"
    )
    return out, weights


def _call_or_layout(attention, Q, K, V, what):
    """``_call``, after ``_layout_hint``."""
    _layout_hint(attention, Q, K, V, what)
    return _call(attention, Q, K, V, what)


def _layout_hint(attention, Q, K, V, what):
    """Where attention raises, whether it runs with K given transposed, or with V as wide as Q:
    the layout it expects, said (a shape it ties to another, seen, not guessed)."""
    try:
        attention(Q.copy(), K.copy(), V.copy())
    except Exception as e:
        wide = np.concatenate([V, np.zeros((*V.shape[:-1], Q.shape[-1] - V.shape[-1]))], -1)
        for other, words in (
            (
                (Q, np.swapaxes(K, -1, -2), V),
                "with K given transposed, shape (d_k, m), it runs: it takes K as already "
                "transposed. The contract gives K as (m, d_k), one row per key: transpose it "
                "inside attention (on its last two axes), not in the caller.",
            ),
            (
                (Q, K, wide),
                "with V as wide as Q (d_v == d_k) it runs: its output is tied to the queries' "
                "width. The output is weights @ V, shape (n, d_v): make it from V, not in Q's "
                "shape.",
            ),
            (
                (Q, np.swapaxes(K, -1, -2), wide),
                "with K given transposed, shape (d_k, m), and V as wide as Q it runs: it takes K "
                "as already transposed and ties d_v to d_k. The contract gives K as (m, d_k), "
                "one row per key (transpose it inside attention, on its last two axes), and V "
                "of any width d_v.",
            ),
        ):
            try:
                attention(*(x.copy() for x in other))
            except Exception:
                continue
            raise AssertionError(
                f"for {what} attention raised {type(e).__name__}; {words}"
            ) from None


def _rows_hint(weights, scores):
    """A hint for weights whose rows are the softmax of ``scores`` (the right scaled scores)
    each times a factor of its own, so that they do not sum to 1: "" when they are not."""
    w = np.asarray(weights, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if w.shape != s.shape or not np.all(np.isfinite(w)) or np.any(w < 0):
        return ""
    e = np.exp(s - s.max(-1, keepdims=True))
    total, c = e.sum(-1), w.sum(-1)  # the softmax's sums (over exp(max)), the rows' sums
    if (
        np.allclose(c, 1)
        or np.any(c <= 0)
        or not np.allclose(w, c[..., None] * e / total[..., None])
    ):
        return ""
    sums = f"the rows sum to {_show(c)}"
    if np.all(c < 1):
        logit = s.max(-1) + np.log(total * (1 / c - 1))  # the extra logit that gives each row
        if np.allclose(logit, logit.flat[0], atol=1e-6):
            value = "0" if abs(logit.flat[0]) < 1e-6 else f"{logit.flat[0]:.3g}"
            return (
                f" Your weights are the right ones scaled down row by row ({sums}): that is what "
                f"one extra logit of {value}, joined to the scores for the softmax and dropped "
                'after it, gives (an attention sink, a "softmax plus one"). Take the softmax '
                "over the real keys only, so that every row sums to 1."
            )
    if np.allclose(c, c.flat[0]):
        return (
            f" Your weights are the right ones times {c.flat[0]:.4g} in every row ({sums}): is "
            "something scaling the weights after the softmax? Return the softmax itself, every "
            "row summing to 1."
        )
    return (
        f" Your weights are the right ones times a factor per row ({sums}): is the division by "
        "the sum missing, or something added to it? Divide each row's exponentials by their "
        "own sum, so that every row sums to 1."
    )


def _scale_or_mask(weights, scores, right):
    """A hint for weights that are the softmax of ``scores`` (the right ones, already divided
    by sqrt(d_k)) times another factor, or with keys given zero weight where ``right`` gives
    them some (a mask): "" when they are neither."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != right.shape or not np.all(np.isfinite(w)) or not np.allclose(w.sum(-1), 1):
        return ""
    zero = (w < 1e-12) & (np.asarray(right) > 1e-6)
    if zero.any():
        *head, i, j = np.argwhere(zero)[0]
        where = f"In head {head[0]} query" if len(head) == 1 else "Query"
        return (
            f" {where} {i} gives key {j} a weight of 0, which no softmax of finite scores "
            "gives: is a mask applied (a band or window, a triangle, a stride)? "
            "This attention attends every key: take the softmax over all the scores, with no "
            "-inf or mask put into them."
        )
    keep = (w > 1e-300) & np.isfinite(scores)
    top = np.argmax(w, axis=-1)[..., None]
    a = (np.log(np.where(keep, w, 1.0)) - np.log(np.take_along_axis(w, top, -1)))[keep]
    b = (scores - np.take_along_axis(scores, top, -1))[keep]
    if not np.any(b):
        return ""
    r = float(a @ b / (b @ b))
    if r <= 0 or abs(r - 1) < 1e-3 or not np.allclose(a, r * b, atol=1e-6):
        return ""  # no scale gives these weights, or one that points to another mistake
    return (
        f" That is what a scale {r:.3g} times 1/sqrt(d_k) gives: if your scores are scaled by "
        "anything else than 1/sqrt(d_k) (an extra factor, a temperature, a fixed number), "
        "divide Q K^T by sqrt(d_k) alone."
    )


@test_case()
@kinds("one head, n != m and d_k != d_v")
def test_worked_values(attention):
    # d_k = 4, so scores are divided by sqrt(4) = 2: query . key1 = 2 log 3 gives score log 3.
    Q = np.array([[2 * np.log(3.0), 0.0, 0.0, 0.0]])
    K = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    V = np.array([[4.0, 8.0], [0.0, 4.0]])
    out, weights = _call_or_layout(attention, Q, K, V, "one query, two keys, d_k = 4")
    if not np.allclose(weights, [[0.25, 0.75]]):
        hint = ""
        if np.allclose(weights, [[0.1, 0.9]]):
            hint = " That is what you get without dividing the scores by sqrt(d_k)."
        elif np.allclose(weights, [[1, np.sqrt(3)]] / (1 + np.sqrt(3))):
            hint = " That is what you get dividing by d_k = 4 instead of sqrt(d_k) = 2."
        else:
            scores = np.array([[0.0, np.log(3.0)]])
            hint = _rows_hint(weights, scores) or _scale_or_mask(
                weights, scores, np.array([[0.25, 0.75]])
            )
        raise AssertionError(
            "the scores are [0, 2 log 3] / sqrt(4) = [0, log 3], so the weights should be "
            f"[1/4, 3/4]; got {_show(weights)}.{hint}"
        )
    if not np.allclose(out, [[1.0, 5.0]]):
        hint = ""
        if np.allclose(out, [[7.0, 3.0]]):
            hint = " That is weights @ V.T: transpose K, not V."
        raise AssertionError(
            "out = weights @ V = 1/4 * [4, 8] + 3/4 * [0, 4] = [1, 5]; got " + _show(out) + hint
        )


@test_case()
@kinds("one head, n != m and d_k != d_v")
def test_shapes_and_rows_sum_to_one(attention):
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    what = "Q (3, 4), K (5, 4), V (5, 2)"
    out, weights = _call_or_layout(attention, Q, K, V, what)
    assert np.all(weights >= 0) and np.allclose(weights.sum(axis=-1), 1), (
        f"for {what} each query's weights over the 5 keys must be >= 0 and sum to 1; the rows "
        f"sum to {_show(weights.sum(axis=-1))}.{_rows_hint(weights, Q @ K.T / 2.0)}"
    )
    if not np.all(weights > 0):  # a softmax of finite scores is never 0
        i, j = np.argwhere(weights <= 0)[0]
        raise AssertionError(
            f"for {what} query {i} gives key {j} a weight of 0, which no softmax of finite "
            "scores gives: is a mask applied (a band or window, a triangle, a stride)? This "
            "attention attends every key: take the softmax over all the scores, with no -inf or "
            f"mask put into them. Your weights: {_show(weights)}"
        )
    assert _close(out, weights @ V), (
        f"for {what} out must be weights @ V; it is not. Your out: {_show(out)}"
    )


@test_case()
@kinds("a leading head axis (3-D)", "two leading axes (4-D)")
def test_leading_axes_are_independent(attention):
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    what = "stacked heads: Q (2, 3, 4), K (2, 5, 4), V (2, 5, 2)"
    before = [A.copy() for A in (Q, K, V)]
    try:
        out, weights = _call_or_layout(attention, Q, K, V, what)
    except (ValueError, IndexError) as e:
        raise AssertionError(
            f"attention failed on {what} ({type(e).__name__}: {e}). On a 3-D array K.T reverses "
            "every axis, giving (4, 5, 2), and a fixed list of axes fits one rank only; swap "
            "just the last two axes, counted from the end, with np.swapaxes(K, -1, -2): the "
            "same code then serves 2-D, 3-D and 4-D inputs."
        ) from e
    for label, A, B in zip("QKV", (Q, K, V), before, strict=True):
        assert np.array_equal(A, B), (
            f"attention changed its input {label} in place on {what}, so the heads cannot be "
            f"compared with the same inputs again. Do not modify the arrays you were given: "
            f"make a new array ({label} / a number, or scale the scores) instead of writing "
            "into it."
        )
    for h in range(2):
        out_h, weights_h = _call_or_layout(attention, Q[h], K[h], V[h], f"head {h} alone")
        assert _close(weights[h], weights_h) and _close(out[h], out_h), (
            f"on {what} slice [{h}] of the result must equal attention(Q[{h}], K[{h}], V[{h}]): "
            "the leading axis is a batch of independent attentions. Name the axes from the end: "
            "swap only the last two axes of K (np.swapaxes(K, -1, -2)), divide by the square "
            "root of Q.shape[-1], and take the softmax along axis=-1 (the keys)."
        )
    Q4, K4, V4 = (np.stack([A, A[::-1]]) for A in (Q, K, V))  # two leading axes: (2, 2, ...)
    out4, _ = _call_or_layout(attention, Q4, K4, V4, "two leading axes: Q (2, 2, 3, 4)")
    assert _close(out4[0], out), (
        "with two leading axes, Q (2, 2, 3, 4), each [i, j] slice must be an independent "
        "attention; the [0] half does not match the 3-D result"
    )


@test_case()
@kinds("scores as large as 1e4")
def test_large_scores_stay_finite(attention):
    Q = np.array([[100.0, 0.0], [0.0, -100.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 100.0]])  # scores up to 1e4 / sqrt(2)
    V = np.eye(3)[:, :2]
    out, weights = _call_or_layout(attention, Q, K, V, "scores of about 7000 in magnitude")
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(out)), (
        f"scores of about 7000 gave weights {_show(weights)}: exp overflows. Use a softmax that "
        "subtracts the row maximum first."
    )
    assert np.allclose(weights, [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]), (
        f"query 0 should put all its weight on key 0, query 1 half on key 0 and half on key 1 "
        f"(scores 0, 0, -7071); got {_show(weights)}"
    )


@test_case()
@kinds("one head, n == m == d_k == d_v")
def test_square_worked_values(attention):
    # n = m = d_k = d_v = 2: every shape is (2, 2), so only the values tell K from K^T, V from
    # V^T and Q K^T from K Q^T. Scores are divided by sqrt(2); s = sqrt(2) log 3 gives log 3.
    s = np.sqrt(2.0) * np.log(3.0)
    Q = np.array([[s, 0.0], [0.0, 0.0]])
    K = np.array([[0.0, 0.0], [1.0, 0.0]])
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, weights = _call_or_layout(attention, Q, K, V, "Q, K and V all of shape (2, 2)")
    if not np.allclose(weights, [[0.25, 0.75], [0.5, 0.5]]):
        hint = ""
        if np.allclose(weights, [[0.5, 0.5], [0.5, 0.5]]):
            hint = " Every row is even: the scores are not Q K^T (is K transposed?)."
        elif np.allclose(weights, [[0.5, 0.5], [0.75, 0.25]]):
            hint = " That is K Q^T: the queries must be on the left, Q @ K^T."
        else:
            scores = np.array([[0.0, np.log(3.0)], [0.0, 0.0]])
            hint = _scale_or_mask(weights, scores, np.array([[0.25, 0.75], [0.5, 0.5]]))
        raise AssertionError(
            "Q K^T / sqrt(2) = [[0, log 3], [0, 0]], so the weights should be [[1/4, 3/4], "
            f"[1/2, 1/2]]; got {_show(weights)}.{hint}"
        )
    if not np.allclose(out, [[2.5, 3.5], [2.0, 3.0]]):
        hint = ""
        if np.allclose(out, [[1.75, 3.75], [1.5, 3.5]]):
            hint = " That is weights @ V.T: transpose K, not V."
        raise AssertionError(
            "out = weights @ V: row 0 is 1/4 [1, 2] + 3/4 [3, 4] = [2.5, 3.5] and row 1 is "
            f"[2, 3]; got {_show(out)}.{hint}"
        )


@test_case()
@kinds("float32 inputs")
def test_float32_inputs(attention):
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    what = "float32 Q (2, 3, 4), K (2, 5, 4), V (2, 5, 3)"
    out32, weights32 = _call_or_layout(attention, *(A.astype(np.float32) for A in (Q, K, V)), what)
    for label, A in (("out", out32), ("weights", weights32)):
        assert A.dtype in (np.float32, np.float64), (
            f"for {what} {label} may be float32 or float64; got {_show(A)}"
        )
    # The same numbers in float64, through your own attention: float32 keeps about 7 digits.
    Q, K, V = (A.astype(np.float32).astype(np.float64) for A in (Q, K, V))
    out, weights = _call_or_layout(attention, Q, K, V, "the same inputs in float64")
    assert _within_float32(weights32, weights) and _within_float32(out32, out), (
        f"for {what} the result should be what the same numbers give in float64, to float32 "
        f"precision; got weights {_show(weights32)} (float64: {_show(weights)})"
    )


@test_case()
@kinds("the inputs left unmodified")
def test_inputs_are_not_modified(attention):
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    before = [A.copy() for A in (Q, K, V)]
    _layout_hint(attention, Q, K, V, "Q (3, 4), K (5, 4), V (5, 2)")
    attention(Q, K, V)
    for label, A, B in zip("QKV", (Q, K, V), before, strict=True):
        assert np.array_equal(A, B), (
            f"attention changed its input {label} in place (for instance {label} /= or *= on "
            "the array it was given): its results may be right, but the caller's array is not "
            f"what it was. Do not modify the arrays you were given: make a new array ({label} / "
            "a number, or scale the scores) instead of writing into it."
        )
