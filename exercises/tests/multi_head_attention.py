"""Public checks for multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads).

The hidden tests use other inputs and more cases.
"""

import contextlib
import sys

import numpy as np
from otter.test_files import test_case

name = "multi_head_attention"
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


def _call(mha, X, Ws, num_heads, what):
    """Call multi_head_attention and check it returns (out, weights) with the contract's shapes."""
    result = mha(X, *Ws, num_heads)
    assert isinstance(result, tuple) and len(result) == 2, (
        f"multi_head_attention must return a tuple (out, weights); for {what} it returned "
        f"{_show(result)}"
    )
    out, weights = result
    n, d_model = X.shape
    assert isinstance(out, np.ndarray) and out.shape == (n, d_model), (
        f"for {what} out must have shape (n, d_model) = {(n, d_model)}; got {_show(out)}"
    )
    want = (num_heads, n, n)
    if getattr(weights, "shape", None) in ((n, n), (1, n, n)) and num_heads > 1:
        raise AssertionError(
            f"for {what} weights must have shape (num_heads, n, n) = {want}, one pattern per "
            f"head; got {_show(weights)}: did you run one attention over all of d_model instead "
            "of splitting Q, K and V into heads?"
        )
    assert isinstance(weights, np.ndarray) and weights.shape == want, (
        f"for {what} weights must have shape (num_heads, n, n) = {want}; got {_show(weights)}"
    )
    return out, weights


def _random_case(seed, n=3, d_model=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d_model))
    Ws = [rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for _ in range(4)]
    return X, Ws


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


def _other_layer_hint(weights, X, Wq, Wk, num_heads):
    """A hint for weights that another layer gives on a worked example: heads narrower than
    d_head (only the first columns of Wq and Wk used), or keys shared by groups of query heads
    (fewer key heads, from the first columns of Wk): "" when neither does."""
    w = np.asarray(weights, dtype=np.float64)
    n, d_model = X.shape
    d_head = d_model // num_heads
    if w.shape != (num_heads, n, n):
        return ""
    Q, K = X @ Wq, X @ Wk

    def heads(M, count, width):  # head i: columns i*width:(i+1)*width
        return np.stack([M[:, i * width : (i + 1) * width] for i in range(count)])

    def softmax_of(q, k):
        return _attention_as_asked(q, k, k)[1]

    for width in range(1, d_head):
        k = width * num_heads
        if np.allclose(w, softmax_of(heads(Q, num_heads, width), heads(K, num_heads, width))):
            return (
                f" That is what using only the first {k} columns of Wq and Wk gives (heads "
                f"{width} wide instead of d_head = {d_head}): project with all d_model columns "
                "and split them into heads d_model // num_heads wide."
            )
    for kv in (kv for kv in range(1, num_heads) if num_heads % kv == 0):
        shared = np.repeat(heads(K, kv, d_head), num_heads // kv, axis=0)
        if np.allclose(w, softmax_of(heads(Q, num_heads, d_head), shared)):
            return (
                f" That is what {kv} key head{'s' if kv > 1 else ''} shared among the "
                f"{num_heads} query heads gives (made from the first {kv * d_head} columns of "
                "Wk, as multi-query or grouped-query attention does): every head has its own "
                "keys and values, columns h*d_head:(h+1)*d_head of X @ Wk and X @ Wv."
            )
    return ""


def _scale_or_mask(weights, scores, right):
    """A hint for weights that are the softmax of ``scores`` (the right ones, already divided
    by sqrt(d_head)) times another factor, or with keys given zero weight where ``right`` gives
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
            "Every head attends every key: take the softmax over all the scores, with no -inf or "
            "mask put into them."
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
        f" That is what a scale {r:.3g} times 1/sqrt(d_head) gives: if your scores are scaled by "
        "anything else than 1/sqrt(d_head) (an extra factor, a temperature, a fixed number), "
        "divide Q K^T by sqrt(d_head) alone."
    )


@test_case()
@kinds("one head")
def test_worked_values_one_head(multi_head_attention):
    # One head of width 2, so scores are divided by sqrt(2); t = sqrt(2) log 3 gives score log 3.
    t = np.sqrt(2.0) * np.log(3.0)
    X = np.eye(2)
    Wq = np.array([[t, 0.0], [0.0, 0.0]])  # Q = [[t, 0], [0, 0]]
    Wk = np.array([[0.0, 0.0], [1.0, 0.0]])  # K = [[0, 0], [1, 0]]
    Wv = np.array([[1.0, 0.0], [0.0, 2.0]])  # V = [[1, 0], [0, 2]]
    Wo = np.array([[1.0, 1.0], [0.0, 1.0]])  # adds feature 0 to feature 1 (not symmetric)
    out, weights = _call(multi_head_attention, X, [Wq, Wk, Wv, Wo], 1, "a 1-head example")
    if not np.allclose(weights, [[[0.25, 0.75], [0.5, 0.5]]]):
        hint = ""
        if np.allclose(weights, [[[0.5, 0.5], [0.75, 0.25]]]):
            hint = " That is Q and K swapped: queries come from X @ Wq, keys from X @ Wk."
        else:
            scores = np.array([[[0.0, np.log(3.0)], [0.0, 0.0]]])
            hint = _rows_hint(weights, scores) or _scale_or_mask(
                weights, scores, np.array([[[0.25, 0.75], [0.5, 0.5]]])
            )
        raise AssertionError(
            "with Q = X @ Wq = [[t, 0], [0, 0]] and K = X @ Wk = [[0, 0], [1, 0]], the scores "
            "Q K^T / sqrt(2) are [[0, log 3], [0, 0]], so the weights should be "
            f"[[1/4, 3/4], [1/2, 1/2]]; got {_show(weights)}.{hint}"
        )
    if not np.allclose(out, [[0.25, 1.75], [0.5, 1.5]]):
        hint = ""
        if np.allclose(out, [[0.25, 1.5], [0.5, 1.0]]):
            hint = " That is the result before the output projection: multiply by Wo at the end."
        elif np.allclose(out, [[1.75, 1.5], [1.5, 1.0]]):
            hint = " That is multiplying by Wo transposed: project with merged @ Wo, as given."
        raise AssertionError(
            "weights @ V = [[1/4, 3/2], [1/2, 1]], and Wo = [[1, 1], [0, 1]] adds feature 0 to "
            f"feature 1, so out should be [[1/4, 7/4], [1/2, 3/2]]; got {_show(out)}.{hint}"
        )


@test_case()
@kinds("n == d_head")
def test_worked_values_two_heads(multi_head_attention):
    # d_model = 4, 2 heads of width 2: token 0 lives in head 0's features, token 1 in head 1's.
    a = np.sqrt(np.sqrt(2.0) * np.log(3.0))  # a**2 / sqrt(d_head) = log 3
    X = np.array([[a, 0.0, 0.0, 0.0], [0.0, 0.0, a, 0.0]])
    eye, reverse = np.eye(4), np.eye(4)[::-1]  # X @ reverse reverses the features
    out, weights = _call(multi_head_attention, X, [eye, eye, eye, reverse], 2, "a 2-head example")
    expected = [[[0.75, 0.25], [0.5, 0.5]], [[0.5, 0.5], [0.25, 0.75]]]
    if not np.allclose(weights, expected):
        hint = ""
        if np.isclose(weights[0, 0, 0], 3 ** (1 / np.sqrt(2)) / (1 + 3 ** (1 / np.sqrt(2)))):
            hint = (
                " That is dividing by sqrt(d_model) = 2: each head scales by the square root of "
                "its own width, d_head = 2."
            )
        else:
            log3 = np.log(3.0)
            scores = np.array([[[log3, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, log3]]])
            hint = (
                _rows_hint(weights, scores)
                or _scale_or_mask(weights, scores, np.array(expected))
                or _other_layer_hint(weights, X, eye, eye, 2)
            )
        raise AssertionError(
            "head 0 sees features 0:2 (token 0 = [a, 0], token 1 = [0, 0]) and head 1 features "
            "2:4, with a*a / sqrt(2) = log 3; the weights should be head 0: [[3/4, 1/4], "
            f"[1/2, 1/2]], head 1: [[1/2, 1/2], [1/4, 3/4]]; got {_show(weights)}.{hint}"
        )
    merged = np.array([[3 * a / 4, 0.0, a / 2, 0.0], [a / 2, 0.0, 3 * a / 4, 0.0]])
    if not np.allclose(out, merged @ reverse):
        hint = ""
        if np.allclose(out, merged):
            hint = " That is the merged heads before the output projection: multiply by Wo."
        raise AssertionError(
            f"the merged heads are {_show(merged)} and Wo reverses the features, so out should be "
            f"{_show(merged @ reverse)}; got {_show(out)}.{hint}"
        )


def _attention_as_asked(Q, K, V, *more, **options):
    """Attention as the contract asks for it, standing in for yours in one check below; any
    argument beyond Q, K and V is not the contract's and is left aside, as grading does."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return w @ V, w


@contextlib.contextmanager
def _right_attention(multi_head_attention, yours):
    """Wherever multi_head_attention finds your attention (its module, or multihead), one that
    does what the contract asks."""
    fn = multi_head_attention
    while not hasattr(fn, "__globals__") and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__  # as mha-check hands it to a check
    multihead = sys.modules.get("multihead")
    spaces = [getattr(fn, "__globals__", {}), getattr(multihead, "__dict__", {})]
    undo = []
    for space in spaces:
        for key, value in list(space.items()):
            if value is yours or getattr(value, "__wrapped__", None) is yours:
                space[key] = _attention_as_asked
                undo.append((space, key, value))
    try:
        yield
    finally:
        for space, key, value in reversed(undo):
            space[key] = value


@test_case()
@kinds("two heads, n != d_head")
def test_worked_values_three_tokens_two_heads(multi_head_attention):
    # d_model = 4, 2 heads of width 2, n = 3 tokens (n != d_head): the third token is zero.
    a = np.sqrt(np.sqrt(2.0) * np.log(3.0))  # a**2 / sqrt(d_head) = log 3
    X = np.array([[a, 0.0, 0.0, 0.0], [0.0, 0.0, a, 0.0], [0.0, 0.0, 0.0, 0.0]])
    eye = np.eye(4)
    _, weights = _call(multi_head_attention, X, [eye, eye, eye, eye], 2, "a 3-token example")
    third = 1.0 / 3.0
    expected = [
        [[0.6, 0.2, 0.2], [third, third, third], [third, third, third]],
        [[third, third, third], [0.2, 0.6, 0.2], [third, third, third]],
    ]
    if not np.allclose(weights, expected):
        hint = ""
        scaled = {"the number of tokens, 3": np.sqrt(3.0), "d_model = 4": 2.0}
        for by, root in scaled.items():
            e = np.exp(a * a / root)
            if np.isclose(weights[0, 0, 0], e / (e + 2.0)):
                hint = (
                    f" That is dividing by the square root of {by}: each head scales by the "
                    "square root of its own query width, d_head = 2."
                )
        if not hint:
            scores = np.zeros((2, 3, 3))
            scores[0, 0, 0] = scores[1, 1, 1] = np.log(3.0)
            hint = (
                _rows_hint(weights, scores)
                or _scale_or_mask(weights, scores, np.array(expected))
                or _other_layer_hint(weights, X, eye, eye, 2)
            )
        raise AssertionError(
            "head 0 sees features 0:2 (token 0 = [a, 0], tokens 1 and 2 = [0, 0]) and head 1 "
            "features 2:4 (token 1 = [a, 0]), with a*a / sqrt(2) = log 3; the weights should be "
            "head 0: [[3/5, 1/5, 1/5], [1/3, 1/3, 1/3], [1/3, 1/3, 1/3]], head 1: [[1/3, 1/3, "
            f"1/3], [1/5, 3/5, 1/5], [1/3, 1/3, 1/3]]; got {_show(weights)}.{hint}"
        )


@test_case()
@kinds("one head", "two heads, n != d_head", "more heads than tokens")
def test_shapes_and_rows_sum_to_one(multi_head_attention):
    X, Ws = _random_case(4)
    for num_heads in (1, 2, 4, 8):
        what = f"X (3, 8) with {num_heads} heads"
        out, weights = _call(multi_head_attention, X, Ws, num_heads, what)
        assert np.allclose(weights.sum(axis=-1), 1) and np.all(weights >= 0), (
            f"for {what} every head's rows of weights must be >= 0 and sum to 1; they sum to "
            f"{_show(weights.sum(axis=-1))}"
        )


@test_case()
@kinds("two heads, n != d_head")
def test_each_head_sees_only_its_own_features(multi_head_attention):
    X, (Wq, Wk, Wv, Wo) = _random_case(5)
    _, weights = _call(multi_head_attention, X, [Wq, Wk, Wv, Wo], 2, "X (3, 8) with 2 heads")
    Wq2 = Wq.copy()
    Wq2[:, 4:] *= 3.0  # changes only the queries of head 1 (features 4:8)
    _, weights2 = _call(multi_head_attention, X, [Wq2, Wk, Wv, Wo], 2, "X (3, 8) with 2 heads")
    assert _close(weights2[0], weights[0]), (
        "changing only the columns 4:8 of Wq (the queries of head 1) changed head 0's weights: "
        "head 0 must see only features 0:4 of Q, K and V. Project once, then split each of Q, K "
        "and V into heads along the features (head h gets columns h*d_head:(h+1)*d_head)."
    )
    assert not np.allclose(weights2[1], weights[1]), (
        "changing the columns 4:8 of Wq (the queries of head 1) left head 1's weights unchanged: "
        "head 1 must use features 4:8 of Q."
    )
    Wq3 = Wq.copy()
    Wq3[4:, :4] *= 3.0  # how X's features 4:8 feed the queries of head 0
    _, weights4 = _call(multi_head_attention, X, [Wq3, Wk, Wv, Wo], 2, "X (3, 8) with 2 heads")
    assert not np.allclose(weights4[0], weights[0]), (
        "changing only the rows 4:8 of Wq's columns 0:4 (how X's features 4:8 feed head 0's "
        "queries) left head 0's weights unchanged: is only a block of Wq on its diagonal used "
        "(a grouped projection, each head's queries from its own slice of X)? Every head's "
        "queries combine all d_model features of X: Q = X @ Wq with the whole matrix, split "
        "into heads afterwards."
    )
    Wv2, Wo2 = Wv * 2.0, Wo[::-1].copy()
    _, weights3 = _call(multi_head_attention, X, [Wq, Wk, Wv2, Wo2], 2, "X (3, 8) with 2 heads")
    assert _close(weights3, weights), (
        "changing Wv or Wo changed the attention weights: the weights depend only on the queries "
        "(X @ Wq) and keys (X @ Wk)."
    )
    for label, i, role in (("Wk", 1, "the keys are X @ Wk"), ("Wv", 2, "the values are X @ Wv")):
        Ws = [Wq, Wk, Wv, Wo]
        Ws[i] = Ws[i] * -2.0 + 0.5
        out4, weights4 = _call(multi_head_attention, X, Ws, 2, "X (3, 8) with 2 heads")
        changed = weights4 if label == "Wk" else out4
        before = (
            weights
            if label == "Wk"
            else _call(multi_head_attention, X, [Wq, Wk, Wv, Wo], 2, "X (3, 8) with 2 heads")[0]
        )
        assert not _close(changed, before), (
            f"changing {label} left the {'weights' if label == 'Wk' else 'output'} unchanged: "
            f"{label} is never used ({role}); is another matrix used in its place (Wq for the "
            "keys as well, say)? Use each of Wq, Wk, Wv and Wo in its own place."
        )
    # Q K^T is the same with both signs flipped, and out is linear in V.
    out, weights = _call(multi_head_attention, X, [Wq, Wk, Wv, Wo], 2, "X (3, 8) with 2 heads")
    out5, weights5 = _call(multi_head_attention, X, [-Wq, -Wk, -Wv, Wo], 2, "X (3, 8) with 2 heads")
    assert _close(weights5, weights) and _close(out5, -out), (
        "negating Wq and Wk together leaves every score Q K^T unchanged, and negating Wv negates "
        "the values, so the weights should stay the same and out change sign; yours do not. "
        "Are the projections passed through a non-linearity before attention (a ReLU, as dense "
        "layers with activation=relu give)? They are linear: Q = X @ Wq, K = X @ Wk, V = X @ Wv, "
        "used as they are."
    )


@test_case()
@kinds("n == d_head")
def test_reordering_tokens_reorders_the_result(multi_head_attention):
    X, Ws = _random_case(6, n=4)
    perm = np.array([2, 0, 3, 1])
    out, weights = _call(multi_head_attention, X, Ws, 2, "X (4, 8) with 2 heads")
    out_p, weights_p = _call(multi_head_attention, X[perm], Ws, 2, "X (4, 8) with 2 heads")
    assert _close(out_p, out[perm]) and _close(weights_p, weights[:, perm][:, :, perm]), (
        "self-attention treats the tokens as a set: feeding the same tokens in another order must "
        "give the same rows of out (and of each head's weights) in that order. Yours does not: "
        "is some axis other than the feature axis being split or mixed?"
    )


@test_case()
@kinds("large activations")
def test_large_activations_stay_finite(multi_head_attention):
    X, Ws = _random_case(9, n=4)
    X = X * 60.0  # scores in the thousands: exp overflows unless the softmax is stable
    out, weights = _call(multi_head_attention, X, Ws, 2, "X (4, 8) scaled by 60, 2 heads")
    assert np.all(np.isfinite(weights)) and np.all(np.isfinite(out)), (
        f"with activations this large the scores reach the thousands; your weights: "
        f"{_show(weights)}. exp overflows to inf (and inf / inf is nan): use a softmax that "
        "subtracts each row's maximum first."
    )
    assert np.allclose(weights.sum(axis=-1), 1) and np.all(weights >= 0), (
        f"every head's rows of weights must be >= 0 and sum to 1, also for large scores; they "
        f"sum to {_show(weights.sum(axis=-1))}"
    )


@test_case()
@kinds("float32 inputs")
def test_float32_inputs(multi_head_attention):
    X, Ws = _random_case(10, n=4)
    X, Ws = X.astype(np.float32), [W.astype(np.float32) for W in Ws]
    what = "float32 X (4, 8) and weights, 2 heads"
    out32, weights32 = _call(multi_head_attention, X, Ws, 2, what)
    for label, A in (("out", out32), ("weights", weights32)):
        assert A.dtype in (np.float32, np.float64), (
            f"for {what} {label} may be float32 or float64; got {_show(A)}"
        )
    # The same numbers in float64, through your own function: float32 keeps about 7 digits.
    X, Ws = X.astype(np.float64), [W.astype(np.float64) for W in Ws]
    out, weights = _call(multi_head_attention, X, Ws, 2, "the same inputs in float64")
    assert _within_float32(weights32, weights) and _within_float32(out32, out), (
        f"for {what} the result should be what the same numbers give in float64, to float32 "
        f"precision; got out {_show(out32)} (float64: {_show(out)})"
    )


@test_case()
@kinds("ValueError: num_heads does not divide d_model")
def test_heads_must_divide_d_model(multi_head_attention):
    X, Ws = _random_case(7)
    for num_heads in (3, 5):
        try:
            result = multi_head_attention(X, *Ws, num_heads)
        except ValueError:
            continue
        raise AssertionError(
            f"d_model = 8 cannot be cut into {num_heads} equal heads: multi_head_attention must "
            f"raise ValueError, and it returned {_show(result)}"
        )


@test_case()
@kinds("the inputs left unmodified")
def test_inputs_are_not_modified(multi_head_attention):
    X, Ws = _random_case(8)
    before = [A.copy() for A in (X, *Ws)]
    multi_head_attention(X, *Ws, 2)
    for label, A, B in zip(("X", "Wq", "Wk", "Wv", "Wo"), (X, *Ws), before, strict=True):
        assert np.array_equal(A, B), (
            f"multi_head_attention changed its input {label} in place (for instance {label} *= "
            "or /= on the array it was given): its results may be right, but the caller's "
            "array is not what it was. Do not modify the arrays you were given: compute new "
            "arrays from them instead of writing into them."
        )


@test_case()
@kinds("n == d_head")
def test_a_right_attention_in_place_of_yours(multi_head_attention, attention):
    # Grading runs multi_head_attention with right callees too: a composite right only beside
    # its own callee's mistake (the queries scaled here because attention does not) is charged.
    a = np.sqrt(np.sqrt(2.0) * np.log(3.0))  # a**2 / sqrt(d_head) = log 3
    X = np.array([[a, 0.0, 0.0, 0.0], [0.0, 0.0, a, 0.0]])
    eye, reverse = np.eye(4), np.eye(4)[::-1]
    what = "the 2-head worked example, with an attention that does what the contract asks"
    with _right_attention(multi_head_attention, attention):
        out, weights = _call(multi_head_attention, X, [eye, eye, eye, reverse], 2, what)
    expected = np.array([[[0.75, 0.25], [0.5, 0.5]], [[0.5, 0.5], [0.25, 0.75]]])
    merged = np.array([[3 * a / 4, 0.0, a / 2, 0.0], [a / 2, 0.0, 3 * a / 4, 0.0]])
    if np.allclose(weights, expected) and np.allclose(out, merged @ reverse):
        return
    hint = ""
    twice = np.exp(np.log(3.0) / np.sqrt(2.0))  # the scores divided by sqrt(d_head) twice
    if np.isclose(weights[0, 0, 0], twice / (1.0 + twice)):
        hint = (
            " That is the scores divided by sqrt(d_head) twice: attention scales Q K^T by "
            "1/sqrt(d_k) itself, so multi_head_attention passes each head's queries to it "
            "unscaled."
        )
    raise AssertionError(
        f"with an attention that does what the contract asks put where your "
        f"multi_head_attention calls yours, the weights should be head 0: [[3/4, 1/4], "
        f"[1/2, 1/2]], head 1: [[1/2, 1/2], [1/4, 3/4]] and out the merged heads with their "
        f"features reversed; got weights {_show(weights)}. Given a right attention your "
        "multi_head_attention is wrong here. Where it passes the other checks with your own "
        "attention, it does something of its own that makes up for what your attention does: "
        "grading checks it with right callees too. Make multi_head_attention right given a "
        "right attention, then fix attention."
        f"{hint}"
    )
