"""Mistakes named as classes, not as their first example (tests/data/authors/FINDINGS_E.md):
a cap on the scores of any size and kind, rotary embeddings of any fraction and base, any rank
refused, any ValueError message without the head count (set E); a shared key and value head
from either end, a multi-query count with or without biases, a bias on the scores by relative
position of any slopes or table (set F, FINDINGS_F.md); a scale by any other factor, a mask of
any pattern, inputs changed in place (set G, FINDINGS_G.md); weights in another's place, operands
in another layout, an output tied to the queries' width, counts by how they behave, a tolerance
of its own (set H, FINDINGS_H.md); weights whose rows are the right ones times a factor (an
attention sink's extra logit of any value), key/value heads shared by groups of any size, the
projections transformed (any activation, any normalisation) or narrowed to any width, weights
rounded through any lower precision (set J, FINDINGS_J.md); returned weights mixed with the
uniform distribution or powered, projections through diagonal blocks, weights from a kernel
without exp, projections clipped or capped at any c, heads compared by a measure of their own,
counts of another layer (set K, FINDINGS_K.md). Transformations outside a class
(a temperature, ALiBi's biases by distance for a cap, a squashing that is not near the identity,
positions added to X, a bias by absolute positions, a tolerance that follows atol, the last
columns of the projections) are not given its name."""

import math

import numpy as np
import pytest

from mha_grader import shown
from mha_grader.diagnose import diagnose, fitted
from mha_grader.diagnose.compare import Outcome
from mha_grader.diagnose.probes import Probe
from solutions import multihead as ref
from tests.mutants.build import reference_env
from tests.mutants.crosscheck_bugs import own_pipeline_cross_check


def _attention(transform):
    def attention(Q, K, V):
        w = ref.softmax(transform(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])), axis=-1)
        return w @ V, w

    return attention


def _alibi(s):
    n, m = s.shape[-2:]
    return s - 0.5 * np.abs(np.arange(n)[:, None] - np.arange(m)[None, :])


CAPS = {
    "tanh-3": lambda s: 3.0 * np.tanh(s / 3.0),
    "tanh-200": lambda s: 200.0 * np.tanh(s / 200.0),
    "clip-2.5": lambda s: np.clip(s, -2.5, 2.5),
}
NOT_CAPS = {
    "temperature": lambda s: 0.7 * s,
    "alibi": _alibi,
    "two-tanh": lambda s: 2.0 * np.tanh(s),  # saturates, but is not the identity near 0
}


@pytest.mark.parametrize("name", CAPS)
def test_a_cap_of_any_size_or_kind_is_attention_logit_softcap(name):
    d = diagnose("attention", reference_env(attention=_attention(CAPS[name])))
    assert d is not None and d.misconceptions == ("attention-logit-softcap",), d and d.message


@pytest.mark.parametrize("name", NOT_CAPS)
def test_other_transformations_of_the_scores_are_not_called_a_cap(name):
    d = diagnose("attention", reference_env(attention=_attention(NOT_CAPS[name])))
    assert d is not None and "attention-logit-softcap" not in d.misconceptions, d.message


def _mha(transform_scores=None, transform_qk=None, transform_x=None):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        src = transform_x(X) if transform_x else X
        q, k, v = (ref.split_heads(src @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        if transform_qk:
            q, k = transform_qk(q), transform_qk(k)
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_head)
        w = ref.softmax(transform_scores(s) if transform_scores else s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    return mha


def _rope_half(fraction, base):
    def rope(x):
        dim = int(x.shape[-1] * fraction) // 2 * 2
        inv = 1.0 / base ** (np.arange(0, dim, 2) / dim)
        ang = np.outer(np.arange(x.shape[-2]), inv)
        a, b = x[..., : dim // 2], x[..., dim // 2 : dim]
        c, s = np.cos(ang), np.sin(ang)
        return np.concatenate((a * c - b * s, b * c + a * s, x[..., dim:]), axis=-1)

    return rope


def test_a_cap_of_any_size_inside_multi_head_attention_is_mha_logit_softcap():
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_mha(CAPS["tanh-3"])))
    assert d is not None and d.misconceptions == ("mha-logit-softcap",), d and d.message


@pytest.mark.parametrize("fraction, base", [(1.0, 1e6), (0.5, 10000.0)])
def test_rotary_embeddings_of_another_fraction_or_base_are_mha_rotary_embedding(fraction, base):
    mha = _mha(transform_qk=_rope_half(fraction, base))
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-rotary-embedding",), d and d.message


def test_positions_added_otherwise_are_not_called_rotary_or_a_cap():
    def positions(X):
        n, d = X.shape
        return X + np.sin(np.arange(n)[:, None] / 10000 ** (np.arange(d)[None, :] / d))

    for mha in (_mha(transform_scores=_alibi), _mha(transform_x=positions)):
        d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
        assert d is not None, "a wrong function with no diagnosis"
        assert not {"mha-rotary-embedding", "mha-logit-softcap"} & set(d.misconceptions)


def test_a_refused_rank_is_named_with_the_ranks_refused_and_those_right():
    """(A function right for one rank only and raising for all others has the outcomes of a
    transpose fixed for that rank: it goes by attention-fixed-rank, whose words say so.)"""

    def attention(Q, K, V):
        if Q.ndim > 3:
            raise ValueError("no batch axis, please")
        return ref.attention(Q, K, V)

    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("attention-expected-rank",), d and d.message
    assert "it raises for 4-D ones and is right for 2-D and 3-D ones" in d.message


def test_a_count_message_without_the_head_count_is_named_beside_another_mistake():
    def parameter_counts(d_model, head_counts, bias=False):
        heads = list(head_counts)
        if any(d_model % h for h in heads):
            raise ValueError("bad head count")
        return {h: 4 * d_model * d_model for h in heads}  # biases left out

    d = diagnose("parameter_counts", reference_env(parameter_counts=parameter_counts))
    assert d is not None
    assert d.misconceptions == ("counts-ignore-bias", "counts-valueerror-unnamed"), d.message


def test_a_small_difference_is_not_declared_a_precision_problem():
    """A cap of 50 moves moderate weights by less than 0.1%: a formula that differs slightly,
    which the case line must not call "a precision problem, not a wrong formula" (the
    diagnosis beside it names the cap)."""
    text = shown.error_size(2e-4, 1.0)
    assert "not a wrong formula" not in text and "differs slightly" in text


# --- the sixth authors' set (FINDINGS_F.md): multi-query attention and its count, a bias by
# relative position on the scores; each class beyond the authors' own example


def _multi_query(block):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        cols = slice(0, d_head) if block == "first" else slice(-d_head, None)
        q = X @ Wq
        k, v = X @ Wk[:, cols], X @ Wv[:, cols]
        outs, weights = [], []
        for h in range(num_heads):  # a loop over query heads, one shared key and value head
            w = ref.softmax(q[:, h * d_head : (h + 1) * d_head] @ k.T / math.sqrt(d_head), axis=-1)
            outs.append(w @ v)
            weights.append(w)
        return np.concatenate(outs, axis=-1) @ Wo, np.stack(weights)

    return mha


@pytest.mark.parametrize("block", ["first", "last"])
def test_a_key_and_value_head_shared_by_all_query_heads_is_mha_multi_query(block):
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_multi_query(block)))
    assert d is not None and d.misconceptions == ("mha-multi-query",), d and d.message


@pytest.mark.parametrize("with_bias", [True, False])
def test_a_multi_query_count_with_or_without_its_biases_is_counts_multi_query(with_bias):
    def parameter_counts(d_model, head_counts, bias=False):
        heads = list(head_counts)
        bad = [h for h in heads if d_model % h]
        if bad:
            raise ValueError(f"head counts {bad} do not divide {d_model}")
        found = {}
        for h in heads:
            q_and_o, k_and_v = 2 * d_model**2, 2 * d_model * (d_model // h)
            b = (2 * d_model + 2 * (d_model // h)) if bias and with_bias else 0
            found[h] = q_and_o + k_and_v + b
        return found

    d = diagnose("parameter_counts", reference_env(parameter_counts=parameter_counts))
    assert d is not None and d.misconceptions == ("counts-multi-query",), d and d.message


def _slopes(h):
    return 2.0 ** (-8.0 * np.arange(1, h + 1) / h)  # the plain geometric sequence


def _relative(bias_of, before_scale=False):
    """Multi-head attention with ``bias_of(h, n)`` (heads, query, key) added to the scores."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        raw, bias = q @ np.swapaxes(k, -1, -2), bias_of(num_heads, X.shape[0])
        s = (raw + bias) / math.sqrt(d_head) if before_scale else raw / math.sqrt(d_head) + bias
        w = ref.softmax(s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    return mha


def _rel(n):
    return np.arange(n)[None, :] - np.arange(n)[:, None]  # j - i


POSITION_BIASES = {
    # the paper's ALiBi, -m_h (i - j), unmasked, with the plain geometric slopes
    "alibi-paper": _relative(lambda h, n: _slopes(h)[:, None, None] * _rel(n)),
    # symmetric (non-causal) ALiBi, -m_h |i - j|, added before the scale
    "alibi-distance-before-scale": _relative(
        lambda h, n: -_slopes(h)[:, None, None] * np.abs(_rel(n)), before_scale=True
    ),
    # one slope for every head
    "one-slope": _relative(lambda h, n: -0.5 * np.abs(_rel(n))[None]),
    # a T5-like table of relative-position biases, clipped to +-2 positions
    "t5-table": _relative(
        lambda h, n: (
            np.array([0.3, -0.2, 0.1, 0.4, -0.5])[np.clip(_rel(n), -2, 2) + 2][None]
            * np.arange(1, h + 1)[:, None, None]
        )
    ),
}


@pytest.mark.parametrize("name", POSITION_BIASES)
def test_a_bias_by_relative_position_on_the_scores_is_mha_alibi_bias(name):
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=POSITION_BIASES[name]))
    assert d is not None and d.misconceptions == ("mha-alibi-bias",), d and d.message


def test_a_bias_by_absolute_positions_is_not_called_alibi():
    mha = _relative(lambda h, n: 0.3 * np.outer(np.arange(n), np.arange(n))[None])
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None, "a wrong function with no diagnosis"
    assert "mha-alibi-bias" not in d.misconceptions, d.message


# -- set G: any other scale, any mask, inputs changed in place -----------------------------------


def _band(s, w=1):
    n, m = s.shape[-2:]
    return np.where(np.abs(np.arange(n)[:, None] - np.arange(m)[None, :]) > w, -np.inf, s)


SCALES = {
    "deberta-sqrt-3dk": (lambda s: s / math.sqrt(3), "Q Kᵀ / sqrt(3 * d_k)"),
    "temperature-0.7": (lambda s: 0.7 * s, "0.7 times the right"),
    "double": (lambda s: 2.0 * s, "2 times the right"),
}


@pytest.mark.parametrize("name", SCALES)
def test_a_scale_by_any_other_factor_is_scale_wrong_factor_with_the_factor(name):
    transform, words = SCALES[name]
    d = diagnose("attention", reference_env(attention=_attention(transform)))
    assert d is not None and d.misconceptions == ("scale-wrong-factor",), d and d.message
    assert words in d.message


def test_a_fixed_scale_is_told_as_a_fixed_number():
    def attention(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) * 0.125, axis=-1)
        return w @ V, w

    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("scale-wrong-factor",), d and d.message
    assert "1/8 whatever d_k is" in d.message


def test_a_specific_scale_keeps_its_own_id():
    def unscaled(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
        return w @ V, w

    d = diagnose("attention", reference_env(attention=unscaled))
    assert d is not None and d.misconceptions == ("scale-missing",), d.message


MASKS = {
    "band": (_band, "within 1 position of its own (a band"),
    "lower-triangle-offset-1": (
        lambda s: np.where(np.tril(np.ones(s.shape[-2:]), 1) == 0, -np.inf, s),
        "up to 1 position after its own",
    ),
    "causal-window": (
        lambda s: np.where(
            np.tril(np.ones(s.shape[-2:])) * np.triu(np.ones(s.shape[-2:]), -1) == 0, -1e9, s
        ),
        "a causal sliding window of 2 keys",
    ),
    "strided": (
        lambda s: np.where(np.arange(s.shape[-1]) % 2 == 1, -np.inf, s),
        "every query sees only the keys 0, 2, 4",
    ),
}


@pytest.mark.parametrize("name", MASKS)
def test_a_mask_of_any_pattern_is_attention_masks_positions_with_the_pattern(name):
    transform, words = MASKS[name]
    d = diagnose("attention", reference_env(attention=_attention(transform)))
    assert d is not None and d.misconceptions == ("attention-masks-positions",), d and d.message
    assert words in d.message


def test_a_causal_mask_keeps_its_own_id():
    causal = lambda s: np.where(np.tril(np.ones(s.shape[-2:])) == 0, -np.inf, s)  # noqa: E731
    d = diagnose("attention", reference_env(attention=_attention(causal)))
    assert d is not None and d.misconceptions == ("attention-causal-mask",), d.message


def test_a_sliding_window_inside_multi_head_attention_is_mha_masks_positions():
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_mha(_band)))
    assert d is not None and d.misconceptions == ("mha-masks-positions",), d and d.message
    assert "a sliding window of 3 keys" in d.message


def test_a_scale_and_a_mask_at_once_are_both_named():
    d = diagnose("attention", reference_env(attention=_attention(lambda s: _band(2.0 * s))))
    assert d is not None
    assert d.misconceptions == ("scale-wrong-factor", "attention-masks-positions"), d.message


@pytest.mark.parametrize("name", ["alibi", "two-tanh"])
def test_other_transformations_are_not_called_a_scale_or_a_mask(name):
    d = diagnose("attention", reference_env(attention=_attention(NOT_CAPS[name])))
    assert d is not None
    assert not {"scale-wrong-factor", "attention-masks-positions"} & set(d.misconceptions)


def test_an_input_changed_in_place_is_named_and_a_copy_is_not():
    def in_place(Q, K, V):
        Q /= math.sqrt(Q.shape[-1])
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
        return w @ V, w

    def on_a_copy(Q, K, V):
        Q = Q / math.sqrt(Q.shape[-1])
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2), axis=-1)
        return w @ V, w

    d = diagnose("attention", reference_env(attention=in_place))
    assert d is not None and d.misconceptions == ("attention-modifies-input",), d and d.message
    assert diagnose("attention", reference_env(attention=on_a_copy)) is None


# -- set H: weights misassigned, operand layouts, the output's width, counts by behaviour, a
# tolerance of its own ---------------------------------------------------------------------


def _mha_with(q_w, k_w, v_w, o_w):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        Ws = {"q": Wq, "k": Wk, "v": Wv, "o": Wo, "qT": Wq.T, "oT": Wo.T}
        return ref.multi_head_attention(X, Ws[q_w], Ws[k_w], Ws[v_w], Ws[o_w], num_heads)

    return mha


MISASSIGNED = {
    "values-from-wq": (("q", "k", "q", "o"), "Wq where Wv belongs"),
    "queries-transposed": (("qT", "k", "v", "o"), "Wqᵀ where Wq belongs"),
    "keys-from-wo-output-transposed": (("q", "o", "v", "oT"), "Wo where Wk belongs and Woᵀ"),
}


@pytest.mark.parametrize("name", MISASSIGNED)
def test_any_weight_in_another_place_is_mha_weights_misassigned_with_the_substitution(name):
    roles, words = MISASSIGNED[name]
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_mha_with(*roles)))
    assert d is not None and d.misconceptions == ("mha-weights-misassigned",), d and d.message
    assert words in d.message


def test_keys_and_queries_swapped_keep_their_own_id():
    d = diagnose(
        "multi_head_attention", reference_env(multi_head_attention=_mha_with("k", "q", "v", "o"))
    )
    assert d is not None and d.misconceptions == ("mha-qk-swapped",), d and d.message


def _attention_product(product):
    def attention(Q, K, V):
        w = ref.softmax(product(Q, K) / math.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, w

    return attention


def test_keys_taken_as_transposed_are_attention_operand_layout_with_the_product():
    d = diagnose("attention", reference_env(attention=_attention_product(lambda Q, K: Q @ K)))
    assert d is not None and d.misconceptions == ("attention-operand-layout",), d and d.message
    assert "Q @ K, the K it was given used as if it were Kᵀ already" in d.message


def test_another_product_is_attention_operand_layout_and_k_q_t_keeps_its_id():
    kq = _attention_product(lambda Q, K: K @ Q)
    d = diagnose("attention", reference_env(attention=kq))
    assert d is not None and d.misconceptions == ("attention-operand-layout",), d and d.message
    assert "scores as K Q" in d.message
    kqt = _attention_product(lambda Q, K: K @ np.swapaxes(Q, -1, -2))
    d = diagnose("attention", reference_env(attention=kqt))
    assert d is not None and d.misconceptions == ("attention-scores-kq",), d and d.message


def test_an_output_in_the_queries_shape_is_attention_output_query_width():
    def attention(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
        out = np.empty(Q.shape)
        out[...] = w @ V
        return out, w

    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("attention-output-query-width",), d and d.message
    assert "raises wherever d_v != d_k" in d.message


def _counts(f):
    def parameter_counts(d_model, head_counts, bias=False):
        head_counts = list(head_counts)
        if any(d_model % h for h in head_counts):
            raise ValueError(f"heads {[h for h in head_counts if d_model % h]}")
        return {h: f(d_model, h, bias) for h in head_counts}

    return parameter_counts


COUNT_CLASSES = {
    "fixed-width-32-per-head": (
        lambda d, h, b: 4 * 32 * h * d + (4 * 32 * h if b else 0),
        "counts-wide-heads",
        "1 head: 1024, 2 heads: 2048",
    ),
    "split-matrices": (
        lambda d, h, b: 4 * d * d // h + (4 * d if b else 0),
        "counts-vary-with-heads",
        "1 head: 256, 2 heads: 128",
    ),
    "extra-matrix-and-temperature": (
        lambda d, h, b: 5 * d * d + 1 + (4 * d if b else 0),
        "counts-extra-terms",
        "plus (d_model^2 + 1), with bias=False and with bias=True",
    ),
    "layernorm-and-a-scale-per-head": (
        lambda d, h, b: 4 * d * d + 2 * d + h + (4 * d if b else 0),
        "counts-extra-terms",
        "plus (2 * d_model + h)",
    ),
    "two-biases-always": (
        lambda d, h, b: 4 * d * d + (4 * d if b else 2 * d),
        "counts-bias-when-false",
        "2 * d_model more",
    ),
}


@pytest.mark.parametrize("name", COUNT_CLASSES)
def test_counts_are_named_by_how_they_behave(name):
    f, mid, words = COUNT_CLASSES[name]
    d = diagnose("parameter_counts", reference_env(parameter_counts=_counts(f)))
    assert d is not None and d.misconceptions == (mid,), d and d.message
    assert words in d.message


def _pairs(distinct):
    def distinct_head_pairs(weights, atol=1e-6):
        h = len(weights)
        return [
            (i, j)
            for i in range(h)
            for j in range(i + 1, h)
            if distinct(np.max(np.abs(weights[i] - weights[j])), atol)
        ]

    return distinct_head_pairs


def test_a_tolerance_of_its_own_is_pairs_ignores_atol_and_a_multiple_of_atol_is_not():
    d = diagnose(
        "distinct_head_pairs", reference_env(distinct_head_pairs=_pairs(lambda x, a: x > 1e-3))
    )
    assert d is not None and d.misconceptions == ("pairs-ignores-atol",), d and d.message
    assert "anything from 1e-05 to 0.1 fits" in d.message
    d = diagnose(
        "distinct_head_pairs", reference_env(distinct_head_pairs=_pairs(lambda x, a: x > 10 * a))
    )
    assert d is not None and "pairs-ignores-atol" not in d.misconceptions, d.message


def test_weights_in_another_layout_are_attention_weights_layout_with_the_shapes():
    def keys_first(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, np.swapaxes(w, -1, -2)  # the book's columns: (..., m, n)

    d = diagnose("attention", reference_env(attention=keys_first))
    assert d is not None and d.misconceptions == ("attention-weights-layout",), d and d.message
    assert "returns weights of shape (2, 5, 4), where (2, 4, 5)" in d.message
    assert "its output is right" in d.message

    def heads_last(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1)
        return w @ V, np.moveaxis(w, 0, -1) if w.ndim > 2 else w

    d = diagnose("attention", reference_env(attention=heads_last))
    assert d is not None and d.misconceptions == ("attention-weights-layout",), d and d.message


INPUT_TRANSFORMS = {
    "layernorm-eps-1e-12": (
        lambda X: (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-12),
        "layer-normalised",
    ),
    "features-standardised": (
        lambda X: (X - X.mean(0)) / X.std(0),
        "each feature standardised over the tokens",
    ),
    "halved-by-width": (lambda X: X / math.sqrt(X.shape[-1]), "X divided by sqrt(d_model)"),
}


@pytest.mark.parametrize("name", INPUT_TRANSFORMS)
def test_a_transform_of_x_before_projecting_is_mha_transforms_input_with_the_transform(name):
    f, words = INPUT_TRANSFORMS[name]
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_mha(transform_x=f)))
    assert d is not None and d.misconceptions == ("mha-transforms-input",), d and d.message
    assert words in d.message


def test_x_scaled_by_sqrt_d_model_keeps_its_own_id_and_positions_added_are_no_transform():
    d = diagnose(
        "multi_head_attention",
        reference_env(multi_head_attention=_mha(transform_x=lambda X: X * math.sqrt(X.shape[-1]))),
    )
    assert d is not None and d.misconceptions == ("mha-scaled-input",), d and d.message
    d = diagnose(
        "multi_head_attention",
        reference_env(multi_head_attention=_mha(transform_x=lambda X: X + 0.1)),
    )
    assert d is not None and "mha-transforms-input" not in d.misconceptions, d.message


def test_cosine_scores_times_a_factor_are_attention_cosine_scores_and_dot_products_are_not():
    def cosine(factor):
        def attention(Q, K, V):
            q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
            k = K / np.linalg.norm(K, axis=-1, keepdims=True)
            w = ref.softmax(factor * q @ np.swapaxes(k, -1, -2), axis=-1)
            return w @ V, w

        return attention

    d = diagnose("attention", reference_env(attention=cosine(4.0)))
    assert d is not None and d.misconceptions == ("attention-cosine-scores",), d and d.message
    assert "times a factor of 4 on every input" in d.message
    d = diagnose("attention", reference_env(attention=_attention(lambda s: 3.0 * s)))
    assert d is not None and d.misconceptions == ("scale-wrong-factor",), d and d.message


# --- set J (FINDINGS_J.md): weights whose rows do not sum to 1, key/value heads shared by groups,
# the projections transformed or narrowed, each beyond its example


def _sunk(sink):
    """attention with one extra logit per row (``sink(scores)``: its value) joined to the
    scores for the softmax and dropped after it."""

    def attention(Q, K, V):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        extra = np.broadcast_to(sink(s), s.shape[:-1] + (1,))
        w = ref.softmax(np.concatenate([s, extra], axis=-1), axis=-1)[..., :-1]
        return w @ V, w

    return attention


def _per_head_sinks(s):
    return np.linspace(-0.5, 1.0, s.shape[0])[:, None, None] if s.ndim == 3 else np.zeros(1)


SINKS = {
    "zero": (lambda s: np.zeros(1), "one extra logit of 0 (a softmax plus one)"),
    "learned-1.5": (lambda s: np.full(1, 1.5), "one extra logit of 1.5"),
    "negative-2": (lambda s: np.full(1, -2.0), "one extra logit of -2"),
}


@pytest.mark.parametrize("name", SINKS)
def test_an_extra_logit_of_any_value_is_attention_rows_not_normalised_with_the_logit(name):
    sink, words = SINKS[name]
    d = diagnose("attention", reference_env(attention=_sunk(sink)))
    assert d is not None and d.misconceptions == ("attention-rows-not-normalised",), d and d.message
    assert words in d.message


def test_a_sink_per_head_inside_multi_head_attention_is_mha_rows_not_normalised():
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        out, w = _sunk(_per_head_sinks)(q, k, v)
        return ref.merge_heads(out) @ Wo, w

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-rows-not-normalised",), d and d.message
    assert "one extra logit per head" in d.message


def test_rows_scaled_up_are_named_and_a_global_softmax_or_a_mask_keeps_its_own_id():
    def never_divided(Q, K, V):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return w @ V, w

    d = diagnose("attention", reference_env(attention=never_divided))
    assert d is not None and d.misconceptions == ("attention-rows-not-normalised",), d and d.message
    assert "never divided by their sum" in d.message

    def global_softmax(Q, K, V):  # every row a factor of the right one, but softmax-global's
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        e = np.exp(s - s.max())
        w = e / e.sum()
        return w @ V, w

    def halved(Q, K, V):
        w = ref.softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), axis=-1) * 0.5
        return w @ V, w

    d = diagnose("attention", reference_env(attention=halved))
    assert d is not None and d.misconceptions == ("attention-rows-not-normalised",), d and d.message
    assert "the right row times 0.5, the same factor for every row" in d.message

    d = diagnose("attention", reference_env(attention=global_softmax))
    assert d is not None and d.misconceptions == ("softmax-global",), d and d.message
    d = diagnose(
        "attention",
        reference_env(
            attention=_attention(lambda s: np.tril(s) - np.triu(np.full(s.shape, np.inf), 1))
        ),
    )
    assert d is not None and "attention-rows-not-normalised" not in d.misconceptions, d.message


def _grouped(kv_heads, order="repeat", block="first"):
    """Grouped-query attention: ``kv_heads(num_heads)`` key/value heads from one end of Wk and
    Wv, repeated to consecutive query heads or tiled."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        g = kv_heads(num_heads)
        cols = slice(0, g * d_head) if block == "first" else slice(X.shape[-1] - g * d_head, None)
        q = ref.split_heads(X @ Wq, num_heads, d_head)
        k, v = (ref.split_heads(X @ W[:, cols], g, d_head) for W in (Wk, Wv))
        if order == "repeat":
            k, v = (np.repeat(a, num_heads // g, axis=0) for a in (k, v))
        else:
            k, v = (np.tile(a, (num_heads // g, 1, 1)) for a in (k, v))
        out, w = ref.attention(q, k, v)
        return ref.merge_heads(out) @ Wo, w

    return mha


def test_key_value_heads_shared_by_groups_are_mha_grouped_query_one_group_mha_multi_query():
    half = _grouped(lambda h: h // 2 if h % 2 == 0 else h, order="tile", block="last")
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=half))
    assert d is not None and d.misconceptions == ("mha-grouped-query",), d and d.message
    assert "with 4 heads, 2 key/value heads, each shared by 2 query heads" in d.message
    assert "the last d_head-wide blocks" in d.message
    one = _grouped(lambda h: 1)
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=one))
    assert d is not None and d.misconceptions == ("mha-multi-query",), d and d.message


def test_groups_of_four_query_heads_are_found_with_eight_heads():
    """The class fitted on inputs with 8 heads: 2 key/value heads, each shared by 4."""
    r = np.random.default_rng(3)
    probes = [
        Probe((r.standard_normal((5, 16)), *(r.standard_normal((16, 16)) / 4 for _ in range(4)), 8))
        for _ in range(2)
    ]
    mha = _grouped(lambda h: h // 4)
    given = [Outcome(value=mha(*p.args)) for p in probes]
    found = fitted.grouped_query(given, probes)
    assert found is not None and {(g.heads, g.kv) for g in found} == {(8, 2)}
    assert "with 8 heads, 2 key/value heads, each shared by 4 query heads" in fitted.grouped_words(
        found
    )
    rolled = [Outcome(value=_rolled_keys(*p.args)) for p in probes]
    assert fitted.grouped_query(rolled, probes) is None


def _rolled_keys(X, Wq, Wk, Wv, Wo, num_heads):  # each head attends with its neighbour's keys
    d_head = X.shape[-1] // num_heads
    q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
    out, w = ref.attention(q, np.roll(k, 1, axis=0), v)
    return ref.merge_heads(out) @ Wo, w


def _projected(f, which="QK", where="head"):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        P = [X @ W for W in (Wq, Wk, Wv)]
        if where == "model":
            P = [f(p) if c in which else p for c, p in zip("QKV", P, strict=True)]
        H = [ref.split_heads(p, num_heads, d_head) for p in P]
        if where == "head":
            H = [f(h) if c in which else h for c, h in zip("QKV", H, strict=True)]
        out, w = ref.attention(*H)
        return ref.merge_heads(out) @ Wo, w

    return mha


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


PROJECTIONS = {
    "gelu-on-qkv": (_projected(_gelu_tanh, "QKV", "model"), "a GELU (its tanh approximation)"),
    "tanh-on-values": (_projected(np.tanh, "V", "model"), "tanh applied to the projected values"),
    "l2-qk-norm": (
        _projected(lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)),
        "queries and keys scaled to unit length (an L2 normalisation), each head's vectors",
    ),
    "layernorm-over-d-model": (
        _projected(
            lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
            "QK",
            "model",
        ),
        "each token's whole projection (over d_model, before the split)",
    ),
}


@pytest.mark.parametrize("name", PROJECTIONS)
def test_projections_transformed_before_attention_are_mha_transforms_projections(name):
    mha, words = PROJECTIONS[name]
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-transforms-projections",), d and d.message
    assert words in d.message


def test_queries_scaled_or_x_normalised_keep_their_own_ids():
    scaled = _projected(lambda x: x / math.sqrt(x.shape[-1]), "Q")
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=scaled))
    assert d is not None and "mha-transforms-projections" not in d.misconceptions, d.message
    d = diagnose(
        "multi_head_attention",
        reference_env(
            multi_head_attention=_mha(
                transform_x=lambda X: X / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + 1e-6)
            )
        ),
    )
    assert d is not None and d.misconceptions == ("mha-transforms-input",), d and d.message


def _narrow(rate, qk_only=False, end="first"):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        c = max((X.shape[-1] // rate) // num_heads, 1)
        k = c * num_heads
        cols = slice(0, k) if end == "first" else slice(X.shape[-1] - k, None)
        q, kk = (ref.split_heads(X @ W[:, cols], num_heads, c) for W in (Wq, Wk))
        if qk_only:
            v, wo = ref.split_heads(X @ Wv, num_heads, X.shape[-1] // num_heads), Wo
        else:
            v, wo = ref.split_heads(X @ Wv[:, cols], num_heads, c), Wo[cols]
        out, w = ref.attention(q, kk, v)
        return ref.merge_heads(out) @ wo, w

    return mha


@pytest.mark.parametrize("rate, qk_only", [(4, False), (2, True)])
def test_a_narrower_projection_of_any_width_is_mha_narrow_projections(rate, qk_only):
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_narrow(rate, qk_only)))
    assert d is not None and d.misconceptions == ("mha-narrow-projections",), d and d.message
    assert "4 of 8 with 4 heads" in d.message
    assert ("Wq and Wk" if qk_only else "Wq, Wk and Wv (and the first k rows of Wo)") in d.message


def test_the_last_columns_are_not_called_a_narrower_projection():
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=_narrow(2, end="last")))
    assert d is None or "mha-narrow-projections" not in d.misconceptions, d.message


@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_weights_through_a_lower_precision_are_adapter_rounded_weights(precision):
    import torch

    from solutions import crosscheck as ref_cc

    def weights_from_torch(mha):
        lowered = getattr(torch, precision)
        return tuple(
            torch.from_numpy(W).to(lowered).double().numpy() for W in ref_cc.weights_from_torch(mha)
        )

    d = diagnose("weights_from_torch", reference_env(weights_from_torch=weights_from_torch))
    assert d is not None and d.misconceptions == ("adapter-rounded-weights",), d and d.message
    assert f"rounded to {precision}" in d.message

    def module_dtype(mha):  # float32 arrays for a float32 module: the dtype shows it
        return tuple(
            W.astype(mha.in_proj_weight.detach().numpy().dtype)
            for W in ref_cc.weights_from_torch(mha)
        )

    d = diagnose("weights_from_torch", reference_env(weights_from_torch=module_dtype))
    assert d is not None and d.misconceptions == ("adapter-float32-weights",), d and d.message


# --- set K (FINDINGS_K.md): each class beyond its example -------------------------------------


def _heads_of(X, Wq, Wk, Wv, num_heads):
    d_head = X.shape[-1] // num_heads
    if X.shape[-1] % num_heads:
        raise ValueError(f"num_heads {num_heads}")
    return [ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv)]


def _returned_weights(transform, follows=False):
    """The right layer whose returned weights are ``transform(w)``; its output from them
    (``follows``) or the right one."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        q, k, v = _heads_of(X, Wq, Wk, Wv, num_heads)
        out, w = ref.attention(q, k, v)
        t = transform(w)
        if follows:
            out = t @ v
        return ref.merge_heads(out) @ Wo, t

    return mha


def _power(a):
    return lambda w: w**a / (w**a).sum(axis=-1, keepdims=True)


SMOOTHED = {
    "mix-0.05": (lambda w: 0.95 * w + 0.05 / w.shape[-1], False, "e = 0.05"),
    "mix-0.3-followed": (lambda w: 0.7 * w + 0.3 / w.shape[-1], True, "e = 0.3"),
    "eps-1e-3": (lambda w: (w + 1e-3) / (w + 1e-3).sum(axis=-1, keepdims=True), False, "e = "),
    "flattened-0.5": (_power(0.5), False, "power 0.5"),
    "sharpened-3": (_power(3.0), False, "power 3"),
}


@pytest.mark.parametrize("name", SMOOTHED)
def test_returned_weights_mixed_with_uniform_or_powered_are_mha_smoothed_weights(name):
    transform, follows, said = SMOOTHED[name]
    mha = _returned_weights(transform, follows)
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-smoothed-weights",), d and d.message
    assert said in d.message
    told = "the one those weights give" if follows else "the right one"
    assert told in d.message


def test_a_temperature_on_the_scores_themselves_keeps_its_scale_id():
    """A temperature the output follows is a scale of the scores, not a smoothing."""

    def hotter(X, Wq, Wk, Wv, Wo, num_heads):
        q, k, v = _heads_of(X, Wq, Wk, Wv, num_heads)
        w = ref.softmax(q @ np.swapaxes(k, -1, -2) / (2.0 * math.sqrt(q.shape[-1])), axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=hotter))
    assert d is not None and "mha-smoothed-weights" not in d.misconceptions, d.message


def _blocked(groups, which="QKV"):
    """The right layer with ``groups(num_heads, d_model)`` blocks on the diagonal of the
    matrices in ``which``, refusing a d_model they do not divide."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_model = X.shape[-1]
        g = groups(num_heads, d_model)
        if d_model % g or d_model % num_heads:
            raise ValueError(f"{g} groups, {num_heads} heads, d_model {d_model}")
        size = d_model // g
        mask = np.kron(np.eye(g), np.ones((size, size)))
        Ws = [W * mask if c in which else W for c, W in zip("QKVO", (Wq, Wk, Wv, Wo), strict=True)]
        return ref.multi_head_attention(X, *Ws, num_heads)

    return mha


@pytest.mark.parametrize(
    "groups, which, said",
    [
        (lambda h, d: 2, "QKV", "2 blocks of d_model / 2"),
        (lambda h, d: 3, "QKVO", "3 blocks of d_model / 3"),
        (lambda h, d: h, "QKV", "one block per head"),
        (lambda h, d: 2, "V", "of Wv used"),
    ],
    ids=["two-groups", "three-groups-with-wo", "per-head", "values-only"],
)
def test_projections_through_diagonal_blocks_are_mha_grouped_projections(groups, which, said):
    mha = _blocked(groups, which)
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-grouped-projections",), d and d.message
    assert said in d.message


def test_an_off_diagonal_block_is_not_called_a_grouped_projection():
    def anti(X, Wq, Wk, Wv, Wo, num_heads):
        d_model = X.shape[-1]
        mask = np.kron(np.fliplr(np.eye(2)), np.ones((d_model // 2, d_model // 2)))
        return ref.multi_head_attention(X, Wq * mask, Wk, Wv, Wo, num_heads)

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=anti))
    assert d is None or "mha-grouped-projections" not in d.misconceptions, d.message


def _kernel(phi=None, on_scores=None, eps=0.0):
    def attention(Q, K, V):
        if phi is not None:
            N = phi(Q) @ np.swapaxes(phi(K), -1, -2)
        else:
            N = on_scores(Q @ np.swapaxes(K, -1, -2))
        w = N / (N.sum(axis=-1, keepdims=True) + eps)
        return w @ V, w

    return attention


KERNELS = {
    "elu1-eps-1e-5": (_kernel(phi=lambda x: np.where(x > 0, x + 1, np.exp(x)), eps=1e-5), "elu"),
    "softplus": (_kernel(phi=lambda x: np.logaddexp(0, x)), "softplus"),
    "exp-features": (_kernel(phi=np.exp), "exp(x)"),
    "relu-scores-eps-1e-6": (_kernel(on_scores=lambda s: np.maximum(s, 0), eps=1e-6), "relu"),
    "abs-scores": (_kernel(on_scores=np.abs), "absolute"),
}


@pytest.mark.parametrize("name", KERNELS)
def test_weights_from_a_kernel_without_exp_are_attention_not_softmax(name):
    attention, said = KERNELS[name]
    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("attention-not-softmax",), d and d.message
    assert said in d.message and "no exp and no softmax" in d.message


def test_a_softmax_of_other_scores_is_not_called_a_kernel():
    d = diagnose("attention", reference_env(attention=_attention(lambda s: 0.5 * s)))
    assert d is not None and "attention-not-softmax" not in d.misconceptions, d.message


def _clipped(cap, which="QKV"):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        heads = _heads_of(X, Wq, Wk, Wv, num_heads)
        heads = [cap(h) if c in which else h for c, h in zip("QKV", heads, strict=True)]
        out, w = ref.attention(*heads)
        return ref.merge_heads(out) @ Wo, w

    return mha


@pytest.mark.parametrize(
    "cap, which, said",
    [
        (lambda x: np.clip(x, -5.0, 5.0), "QKV", "clipped to [-c, c] before attention, c = 5"),
        (lambda x: np.clip(x, -2.0, 2.0), "K", "keys clipped to [-c, c] before attention, c = 2"),
        (lambda x: 20.0 * np.tanh(x / 20.0), "QK", "capped as c * tanh(x / c)"),
    ],
    ids=["clip-5", "clip-2-keys", "tanh-20"],
)
def test_projections_clipped_or_capped_of_any_size_are_mha_transforms_projections(cap, which, said):
    mha = _clipped(cap, which)
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-transforms-projections",), d and d.message
    assert said in d.message


def _by_measure(measure):
    def distinct_head_pairs(weights, atol=1e-6):
        w = np.asarray(weights, dtype=np.float64)
        h = len(w)
        return [(i, j) for i in range(h) for j in range(i + 1, h) if measure(w[i], w[j]) > atol]

    return distinct_head_pairs


def _kl(p, q):
    return np.sum(p * np.log(p / q), axis=-1)


MEASURES = {
    "js-mean": lambda x, y: np.mean((_kl(x, (x + y) / 2) + _kl(y, (x + y) / 2)) / 2),
    "symmetric-kl-sum": lambda x, y: np.sum(_kl(x, y) + _kl(y, x)),
    "l2-norm": lambda x, y: np.linalg.norm(x - y),
    "rms": lambda x, y: np.sqrt(np.mean((x - y) ** 2)),
    "mean-abs": lambda x, y: np.mean(np.abs(x - y)),
}


@pytest.mark.parametrize("name", MEASURES)
def test_heads_compared_by_a_measure_of_their_own_are_pairs_another_distance(name):
    f = _by_measure(MEASURES[name])
    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=f))
    if d is None:
        pytest.skip("this measure gives the right pairs on every probe")
    # where the probes cannot tell it from a fixed tolerance or a relative measure, that class
    # names it: a measure of its own is named either way
    assert len(d.misconceptions) == 1 and d.misconceptions[0].startswith("pairs-"), d.message


def test_js_divergence_summed_is_pairs_another_distance():
    f = _by_measure(lambda x, y: np.sum((_kl(x, (x + y) / 2) + _kl(y, (x + y) / 2)) / 2))
    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=f))
    assert d is not None and d.misconceptions == ("pairs-another-distance",), d and d.message
    assert "Jensen-Shannon" in d.message


@pytest.mark.parametrize("groups", [2, 8])
def test_counts_of_another_layer_are_counts_extra_terms_the_counts_told(groups):
    def parameter_counts(d_model, head_counts, bias=False):
        out = {}
        for h in head_counts:
            if d_model % h:
                raise ValueError(f"{h} heads do not divide d_model = {d_model}")
            per = d_model * max(d_model // groups, 1)  # grouped q, k, v; a full output
            out[h] = 3 * per + d_model * d_model + (4 * d_model if bias else 0)
        return out

    d = diagnose("parameter_counts", reference_env(parameter_counts=parameter_counts))
    assert d is not None and d.misconceptions == ("counts-extra-terms",), d and d.message
    assert "torch's module 1024" in d.message or "d_model^2" in d.message


# --- set L (FINDINGS_L.md): each class beyond its example -------------------------------------


def _softmax_times(c, base=math.e):
    def softmax(x, axis=-1):
        z = np.asarray(x, dtype=np.float64) * c
        e = base ** (z - np.max(z, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    return softmax


@pytest.mark.parametrize(
    "softmax, said",
    [
        (_softmax_times(3.0), "times 3,"),
        (_softmax_times(0.25), "times 0.25,"),
        (_softmax_times(1.0, base=10.0), "ln 10"),
        (_softmax_times(-1.0), "times -1,"),
    ],
    ids=["sharper-3", "flatter-0.25", "base-ten", "softmin"],
)
def test_a_factor_inside_softmax_is_softmax_temperature(softmax, said):
    d = diagnose("softmax", reference_env(softmax=softmax))
    assert d is not None and d.misconceptions == ("softmax-temperature",), d and d.message
    assert said in d.message


def test_a_softmax_of_another_function_of_x_is_no_temperature():
    def squared(x, axis=-1):
        z = np.asarray(x, dtype=np.float64) ** 2
        e = np.exp(z - np.max(z, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    d = diagnose("softmax", reference_env(softmax=squared))
    assert d is not None and "softmax-temperature" not in d.misconceptions, d.message


def _sparse_attention(weigh):
    def attention(Q, K, V):
        w = weigh(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
        return w @ V, w

    return attention


def _topk(k):
    def weigh(s):
        kth = np.sort(s, axis=-1)[..., -k : -k + 1]
        return ref.softmax(np.where(s >= kth, s, -np.inf), axis=-1)

    return weigh


def _sparsemax_unscaled(Q, K, V):
    from mha_grader.diagnose.questions.attention import _sparsemax

    w = _sparsemax(Q @ np.swapaxes(K, -1, -2))
    return w @ V, w


def _entmax15_scaled(s):
    from mha_grader.diagnose.questions.attention import _entmax15

    return _entmax15(s)


def _relu_renormalised_softmax(s):
    w = np.maximum(ref.softmax(s, axis=-1) - 0.1, 0.0)  # small weights dropped, renormalised
    return w / w.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize(
    "attention, said",
    [
        (_sparse_attention(_entmax15_scaled), "1.5-entmax of the scores"),
        (_sparsemax_unscaled, "sparsemax of the unscaled scores"),
        (_sparse_attention(_topk(3)), "exactly zero weight"),
        (_sparse_attention(_relu_renormalised_softmax), "exactly zero weight"),
    ],
    ids=["entmax15", "sparsemax-unscaled", "top-3-softmax", "thresholded-softmax"],
)
def test_weights_cut_to_zero_below_the_best_keys_are_attention_sparse_weights(attention, said):
    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("attention-sparse-weights",), d and d.message
    assert said in d.message


def test_a_mask_by_position_is_no_sparse_map():
    def causal(Q, K, V):
        s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
        n, m = s.shape[-2:]
        w = ref.softmax(np.where(np.tri(n, m, dtype=bool), s, -np.inf), axis=-1)
        return w @ V, w

    d = diagnose("attention", reference_env(attention=causal))
    assert d is not None and "attention-sparse-weights" not in d.misconceptions, d.message


def _activated_mha(f_scores=None, f_out=None):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        q, k, v = _heads_of(X, Wq, Wk, Wv, num_heads)
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        w = ref.softmax(f_scores(s) if f_scores else s, axis=-1)
        out = w @ v
        return ref.merge_heads(f_out(out) if f_out else out) @ Wo, w

    return mha


def _leaky_of(a):
    return lambda x: np.where(x > 0, x, a * x)


@pytest.mark.parametrize(
    "f_scores, f_out, ids, said",
    [
        (_leaky_of(0.35), None, ("mha-activated-scores",), "slope 0.35"),
        (lambda x: np.logaddexp(0.0, x), None, ("mha-activated-scores",), "a softplus"),
        (None, np.tanh, ("mha-activated-head-outputs",), "tanh applied to each head's output"),
        (None, lambda x: x / (1 + np.exp(-x)), ("mha-activated-head-outputs",), "a SiLU"),
        (
            _leaky_of(0.05),
            lambda x: np.maximum(x, 0.0),
            ("mha-activated-scores", "mha-activated-head-outputs"),
            "slope 0.05",
        ),
    ],
    ids=["leaky-0.35", "softplus-scores", "tanh-heads", "silu-heads", "leaky-and-relu"],
)
def test_a_function_on_each_heads_scores_or_output_is_named(f_scores, f_out, ids, said):
    mha = _activated_mha(f_scores, f_out)
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ids, d and d.message
    assert said in d.message


def test_a_function_on_the_merged_output_is_no_activated_head():
    def after_wo(X, Wq, Wk, Wv, Wo, num_heads):
        out, w = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads)
        return np.tanh(out), w

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=after_wo))
    assert d is None or "mha-activated-head-outputs" not in d.misconceptions, d.message


def test_heads_compared_by_their_argmax_over_the_queries_are_pairs_argmax():
    def per_query(weights, atol=1e-6):
        top = np.asarray(weights).argmax(-1)
        h = len(top)
        return [
            (i, j) for i in range(h) for j in range(i + 1, h) if not np.array_equal(top[i], top[j])
        ]

    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=per_query))
    assert d is not None and d.misconceptions == ("pairs-argmax",), d and d.message


def test_a_fixed_tolerance_stays_pairs_ignores_atol():
    def fixed(weights, atol=1e-6):
        w = np.asarray(weights, dtype=np.float64)
        h = len(w)
        return [
            (i, j) for i in range(h) for j in range(i + 1, h) if np.abs(w[i] - w[j]).max() > 1e-3
        ]

    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=fixed))
    assert d is not None and d.misconceptions == ("pairs-ignores-atol",), d and d.message


def test_a_width_assert_beside_a_compensated_softmax_is_attention_output_query_width():
    """Triton's tutorial: exp2 in softmax, log2(e) folded into attention's scale, and an
    assert that d_v equals d_k (set L)."""

    def softmax2(x, axis=-1):
        e = np.exp2(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

    def attention(Q, K, V):
        assert Q.shape[-1] == K.shape[-1] == V.shape[-1]
        w = softmax2(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]) * 1.4426950408889634)
        return w @ V, w

    env = reference_env(softmax=softmax2, attention=attention)
    d = diagnose("attention", env)
    assert d is not None and "attention-output-query-width" in d.misconceptions, d and d.message
    assert "your own softmax" in d.message


def _scored(score):
    def attention(Q, K, V):
        w = ref.softmax(score(Q, K), axis=-1)
        return w @ V, w

    return attention


@pytest.mark.parametrize(
    "score, said",
    [
        (lambda Q, K: np.tanh(Q[..., :, None, :] + K[..., None, :, :]).sum(-1), "tanh(q + k)"),
        (lambda Q, K: 2.0 * np.tanh(Q[..., :, None, :] - K[..., None, :, :]).sum(-1), "q . k"),
        (lambda Q, K: -np.abs(Q[..., :, None, :] - K[..., None, :, :]).sum(-1), "q . k"),
        (lambda Q, K: np.maximum(Q[..., :, None, :] * K[..., None, :, :], 0).sum(-1), "q . k"),
    ],
    ids=["additive", "additive-difference", "l1-distance", "relu-products"],
)
def test_weights_not_by_the_dot_products_are_attention_scores_not_dot_product(score, said):
    d = diagnose("attention", reference_env(attention=_scored(score)))
    assert d is not None and d.misconceptions == ("attention-scores-not-dot-product",), (
        d and d.message
    )
    assert said in d.message


def test_another_scale_of_the_dot_products_keeps_its_scale_id():
    d = diagnose(
        "attention",
        reference_env(attention=_scored(lambda Q, K: 3.0 * Q @ np.swapaxes(K, -1, -2))),
    )
    assert d is not None and "attention-scores-not-dot-product" not in d.misconceptions


def _positioned(add, where="QK", on_out=None):
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        P = add(*X.shape)
        ins = [X + P if c in where else X for c in "QKV"]
        d_head = X.shape[-1] // num_heads
        if X.shape[-1] % num_heads:
            raise ValueError("heads")
        q, k, v = (
            ref.split_heads(a @ W, num_heads, d_head)
            for a, W in zip(ins, (Wq, Wk, Wv), strict=True)
        )
        out, w = ref.attention(q, k, v)
        out = ref.merge_heads(out) @ Wo
        return (on_out(out) if on_out else out), w

    return mha


def _detr_sine(n, d):
    pos = (np.arange(1, n + 1) / n * 2 * np.pi)[:, None]
    i = np.arange(d)[None, :]
    angle = pos / 10000 ** (2 * (i // 2) / d)
    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))


@pytest.mark.parametrize(
    "mha, follows",
    [
        (_positioned(_detr_sine), True),
        (_positioned(lambda n, d: 0.3 * np.outer(np.arange(n), np.ones(d)), "Q"), True),
        (_positioned(lambda n, d: np.cos(np.outer(np.arange(n), np.arange(1, d + 1))), "V"), False),
        (
            _positioned(
                lambda n, d: np.zeros((n, d)),
                on_out=lambda o: o * np.arange(1, len(o) + 1)[:, None],
            ),
            False,
        ),
    ],
    ids=["detr-sine-qk", "index-on-queries", "cosines-on-values", "rows-scaled-by-index"],
)
def test_results_that_do_not_follow_a_reordering_are_mha_depends_on_positions(mha, follows):
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and d.misconceptions == ("mha-depends-on-positions",), d and d.message
    assert ("the positions enter the weights" in d.message) == follows


def test_an_order_free_mistake_is_not_said_to_depend_on_positions():
    def hotter(X, Wq, Wk, Wv, Wo, num_heads):
        q, k, v = _heads_of(X, Wq, Wk, Wv, num_heads)
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        w = ref.softmax(np.sin(3 * s), axis=-1)  # no class, but no position either
        return ref.merge_heads(w @ v) @ Wo, w

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=hotter))
    assert d is not None and "mha-depends-on-positions" not in d.misconceptions, d.message


# --- set M (FINDINGS_M.md): each class beyond its example -------------------------------------


def _cross_check_returning(convert):
    """The reference cross_check with each value of its report passed through ``convert``."""
    from solutions import crosscheck as ref_cc

    def cross_check(mha, X):
        report = ref_cc.cross_check(mha, X)
        return {k: convert(k, v) for k, v in report.items()}

    return cross_check


def _tensor(key, value):
    import torch

    return torch.tensor(value)


def _tensor_match(key, value):
    import torch

    return torch.tensor(value) if key == "match" else value


@pytest.mark.parametrize(
    ("convert", "key", "want"),
    [(_tensor, "output_max_abs_diff", "a float"), (_tensor_match, "match", "a bool")],
)
def test_a_report_of_tensors_is_report_not_plain_floats_with_what_was_asked(convert, key, want):
    """NeMo's 0-d tensors (set M), and a tensor for match alone: the case says which value came
    as what and what was asked; the diagnosis names no mistake of the pipeline."""
    from mha_grader.grading import hidden

    env = reference_env(cross_check=_cross_check_returning(convert))
    results = hidden.run_question("cross_check", env, carry_forward=True)
    assert all(r.score == 0 for r in results), [r.output for r in results]
    assert all(f"'{key}' is a torch tensor, where {want}" in r.output for r in results)
    assert not any(".detach().numpy()" in r.output for r in results)
    d = diagnose("cross_check", env)
    assert d is not None and d.misconceptions == ("report-not-plain-floats",), d and d.message
    assert "split" not in d.message


def test_a_report_of_another_kind_of_object_is_not_called_tensor_values():
    """A whole report that is no dict of plain data (a tensor in place of the dict) is not a
    report whose values are not floats."""
    import torch

    def cross_check(mha, X):
        return torch.zeros(3)

    d = diagnose("cross_check", reference_env(cross_check=cross_check))
    assert d is None or "report-not-plain-floats" not in d.misconceptions


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_report_of_a_right_pipeline_beside_a_wrong_mha_is_report_not_own_pipeline(dtype):
    """Set M: beside a multi_head_attention with a causal mask (not the example's scale), a
    cross_check reporting a right pipeline of its own is named, and that it never called
    multi_head_attention is said; the same cross_check beside a right one is not diagnosed."""

    def causal(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        n, d_head = X.shape[0], X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_head) + np.triu(np.full((n, n), -np.inf), 1)
        w = ref.softmax(s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo, w

    env = reference_env(multi_head_attention=causal, cross_check=own_pipeline_cross_check(dtype))
    d = diagnose("cross_check", env)
    assert d is not None and d.misconceptions == ("report-not-own-pipeline",), d and d.message
    assert "never called your multi_head_attention" in d.message


def _softmax_default(default):
    def softmax(x, axis=default):
        x = np.asarray(x, dtype=np.float64)
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    return softmax


def _softmax_over(pick):
    """A softmax jointly over the axes ``pick(axis, ndim)`` gives."""

    def softmax(x, axis=-1):
        x = np.asarray(x, dtype=np.float64)
        axes = pick(axis % x.ndim, x.ndim)
        e = np.exp(x - x.max(axis=axes, keepdims=True))
        return e / e.sum(axis=axes, keepdims=True)

    return softmax


@pytest.mark.parametrize(
    ("softmax", "said"),
    [
        (
            _softmax_default(0),
            "asked for the default axis of an array of shape (2, 4, 3), it normalised over axis 0",
        ),
        (_softmax_default(1), "it raised NumPy's AxisError"),
        (_softmax_over(lambda a, n: tuple(range(a + 1))), "normalised over axes 0, 1 together"),
        (_softmax_over(lambda a, n: tuple(range(a, n))), "normalised over axes 1, 2 together"),
    ],
)
def test_a_softmax_over_another_set_of_axes_is_softmax_wrong_axis_with_the_axes(softmax, said):
    """Set M: a default other than -1 (Chainer's axis=1, or 0) and a softmax over the axis
    together with the axes after it (ONNX's opset-12 coercion) or before it: named, with what
    was asked and what it normalised over; never "a small difference"."""
    d = diagnose("softmax", reference_env(softmax=softmax))
    assert d is not None and d.misconceptions == ("softmax-wrong-axis",), d and d.message
    assert said in d.message and "small difference" not in d.message


def test_an_axis_error_no_axis_explains_is_not_called_another_axis():
    def softmax(x, axis=-1):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            raise np.exceptions.AxisError("no 1-D input")
        return ref.softmax(x, axis=axis)

    d = diagnose("softmax", reference_env(softmax=softmax))
    assert d is None or "softmax-wrong-axis" not in d.misconceptions


def _mha_plus_x(mask=None, factor=1.0):
    """A multi_head_attention with ``mask`` (True: masked) and/or another scale, and X added to
    its output: two mistakes at once."""

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError(f"num_heads {num_heads}")
        n, d_head = X.shape[0], X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        s = factor * (q @ np.swapaxes(k, -1, -2)) / math.sqrt(d_head)
        if mask is not None:
            s = np.where(mask(n), -np.inf, s)
        w = ref.softmax(s, axis=-1)
        return ref.merge_heads(w @ v) @ Wo + X, w

    return mha


def _window(n):
    i = np.arange(n)
    return np.abs(i[:, None] - i[None, :]) > 1


@pytest.mark.parametrize(
    ("mha", "ids"),
    [
        (_mha_plus_x(mask=_window), ("mha-residual-norm", "mha-masks-positions")),
        (_mha_plus_x(factor=0.5), ("scale-wrong-factor", "mha-residual-norm")),
    ],
)
def test_a_mask_or_scale_with_x_added_names_both_mistakes(mha, ids):
    """Set M (PyG's complete graph without self-loops plus `out + X`): a mask of another
    pattern, or another scale, with a residual: both named, and the weights not called right."""
    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d is not None and set(d.misconceptions) == set(ids), d and d.message
    assert "the weights are right" not in d.message


def _cross_check_matching(close):
    """The reference pipeline's differences, ``match`` decided by ``close(torch's, ours)`` on
    the output and on the weights (ONNX's reference tests: np.allclose's defaults)."""
    import torch

    from solutions import crosscheck as ref_cc

    def cross_check(mha, X):
        x = torch.from_numpy(np.asarray(X)).to(mha.in_proj_weight.dtype)
        x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
        with torch.no_grad():
            e, ew = mha(x, x, x, need_weights=True, average_attn_weights=False)
        e = e.squeeze(0 if mha.batch_first else 1).numpy().astype(np.float64)
        ew = ew.squeeze(0).numpy().astype(np.float64)
        Ws = ref_cc.weights_from_torch(mha)
        got, gw = ref.multi_head_attention(np.asarray(X, dtype=np.float64), *Ws, mha.num_heads)
        return {
            "output_max_abs_diff": float(np.abs(e - got).max()),
            "weights_max_abs_diff": float(np.abs(ew - gw).max()),
            "match": bool(close(e, got) and close(ew, gw)),
        }

    return cross_check


@pytest.mark.parametrize(
    "close", [np.allclose, lambda a, b: bool(np.isclose(a, b, rtol=1e-5, atol=1e-8).all())]
)
def test_a_tolerance_relative_to_each_entry_is_adapter_strict_tolerance(close):
    """Set M: allclose's default tolerance (or any tolerance relative to each entry, whose
    absolute part is far below float32 rounding) calls a float32 module whose output has entries
    near zero no match: adapter-strict-tolerance, as a fixed float64 tolerance is."""
    d = diagnose("cross_check", reference_env(cross_check=_cross_check_matching(close)))
    assert d is not None and d.misconceptions == ("adapter-strict-tolerance",), d and d.message


# --- set N (issue-20-heldout-n-fixes) ------------------------------------------------------


def _bfloat16(a):
    bits = np.asarray(a, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return bits.view(np.float32).astype(np.float64)


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_attention_computed_in_a_lower_precision_is_attention_lower_precision(precision):
    """Set N (MindSpore's compute_dtype float16): both products in a lower precision, here
    also bfloat16 (truncated), the softmax in float64: the precision's rounding, told."""
    r = (
        (lambda a: np.asarray(a).astype(np.float16).astype(np.float64))
        if precision == "float16"
        else _bfloat16
    )

    def attention(Q, K, V):
        s = r(r(Q) @ np.swapaxes(r(K), -1, -2)) / math.sqrt(Q.shape[-1])
        w = ref.softmax(s, axis=-1)
        return r(w @ r(V)), w

    d = diagnose("attention", reference_env(attention=attention))
    assert d is not None and d.misconceptions == ("attention-lower-precision",), d and d.message
    assert "rounding of the products" in d.message


@pytest.mark.parametrize(
    "on_output, on_v, ids",
    [
        (lambda y: 0.5 * y * (1 + np.tanh(0.7978845608 * (y + 0.044715 * y**3))), None, None),
        (np.tanh, lambda v: 1 / (1 + np.exp(-v)), "both"),
    ],
)
def test_an_activation_after_the_output_projection_is_mha_activated_output(on_output, on_v, ids):
    """Set N (keras-multi-head's activation='relu' on the output): a GELU after @ Wo, or tanh
    there with a sigmoid on the projected values as well (then both classes named)."""

    def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
        if X.shape[-1] % num_heads:
            raise ValueError("num_heads must divide d_model")
        d_head = X.shape[-1] // num_heads
        V = X @ Wv if on_v is None else on_v(X @ Wv)
        q, k, v = (ref.split_heads(m, num_heads, d_head) for m in (X @ Wq, X @ Wk, V))
        out, w = ref.attention(q, k, v)
        return on_output(ref.merge_heads(out) @ Wo), w

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=multi_head_attention))
    want = (
        {"mha-activated-output"}
        if ids is None
        else {"mha-activated-output", "mha-transforms-projections"}
    )
    assert d is not None and set(d.misconceptions) == want, d and d.message


@pytest.mark.parametrize("container", [tuple, lambda pairs: [np.array(p) for p in pairs]])
def test_the_right_pairs_in_another_container_are_pairs_not_list_of_tuples(container):
    """Set N (praxis' argwhere): the right pairs as a tuple of tuples or a list of arrays."""

    def distinct_head_pairs(weights, atol=1e-6):
        return container(ref.distinct_head_pairs(weights, atol))

    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=distinct_head_pairs))
    assert d is not None and d.misconceptions == ("pairs-not-list-of-tuples",), d and d.message
    assert "Here it returned a " in d.message


def test_a_generator_of_head_counts_read_twice_is_counts_iterates_twice():
    """Set N (Sockeye's argument checks before the work): head_counts gone through by sorted()
    first, then counted: right on a list, {} on a generator."""

    def parameter_counts(d_model, head_counts, bias=False):
        for h in sorted(head_counts):
            if d_model % h:
                raise ValueError(f"{h} heads do not divide {d_model}")
        return {h: 4 * d_model * d_model + (4 * d_model if bias else 0) for h in head_counts}

    d = diagnose("parameter_counts", reference_env(parameter_counts=parameter_counts))
    assert d is not None and d.misconceptions == ("counts-iterates-twice",), d and d.message


def test_a_refusal_with_another_exception_is_told_as_the_exception_it_raises():
    """Set N (AllenNLP's ConfigurationError): split_heads checks the width but raises another
    exception (an assert here): the id is split-no-valueerror, and the words say what it raised,
    not that there is no check."""

    def split_heads(M, num_heads, d_head):
        assert M.shape[-1] == num_heads * d_head, "width mismatch"
        return ref.split_heads(M, num_heads, d_head)

    d = diagnose("split_heads", reference_env(split_heads=split_heads))
    assert d is not None and d.misconceptions == ("split-no-valueerror",), d and d.message
    assert "raises Python's AssertionError" in d.message, d.message
    assert "never compares" not in d.message
