"""The contract's edge cases (docs/contract.md §1), on the reference solutions.

ValueError cases, inputs never modified in place, leading batch axes in attention, and the
less obvious corners of each function's input (one head, one token, large scores, generators).
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest
import torch

from solutions import crosscheck as ref_cc
from solutions import multihead as ref

RNG = np.random.default_rng(2024)


def frozen(*arrays: np.ndarray) -> list[np.ndarray]:
    """Copies to compare against after a call: the contract says inputs are never modified."""
    return [a.copy() for a in arrays]


def assert_unchanged(arrays, copies) -> None:
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)


# ---------------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("shape, axis", [((5,), -1), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1)])
def test_softmax_sums_to_one_along_the_requested_axis_only(shape, axis):
    x = RNG.normal(size=shape)
    copy = frozen(x)
    out = ref.softmax(x, axis=axis)
    assert out.shape == x.shape
    assert np.all((out >= 0) & (out <= 1))
    np.testing.assert_allclose(out.sum(axis=axis), 1.0)
    assert_unchanged([x], copy)


@pytest.mark.parametrize("scale", [1e4, -1e4])
def test_softmax_is_finite_for_scores_of_1e4(scale):
    x = np.array([[1.0, 0.5, -1.0], [0.0, 0.0, 1.0]]) * scale
    out = ref.softmax(x)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)


def test_softmax_is_unchanged_by_a_shift_of_every_score():
    x = RNG.normal(size=(3, 5))
    np.testing.assert_allclose(ref.softmax(x + 1234.5), ref.softmax(x), rtol=1e-12)


# ------------------------------------------------------------------------- split and merge


@pytest.mark.parametrize("num_heads, d_head", [(3, 2), (2, 3), (1, 5), (6, 1)])
def test_split_heads_rejects_a_width_that_is_not_num_heads_times_d_head(num_heads, d_head):
    M = np.zeros((4, 8))
    with pytest.raises(ValueError):
        ref.split_heads(M, num_heads, d_head)


@pytest.mark.parametrize("n, num_heads, d_head", [(1, 1, 1), (1, 4, 2), (5, 1, 3), (3, 2, 4)])
def test_split_heads_gives_head_h_the_column_block_h(n, num_heads, d_head):
    M = RNG.normal(size=(n, num_heads * d_head))
    copy = frozen(M)
    H = ref.split_heads(M, num_heads, d_head)
    assert H.shape == (num_heads, n, d_head)
    for h in range(num_heads):
        np.testing.assert_array_equal(H[h], M[:, h * d_head : (h + 1) * d_head])
    assert_unchanged([M], copy)


@pytest.mark.parametrize("n, num_heads, d_head", [(1, 1, 1), (1, 4, 2), (5, 1, 3), (3, 2, 4)])
def test_merge_heads_inverts_split_heads_and_leaves_its_input_alone(n, num_heads, d_head):
    M = RNG.normal(size=(n, num_heads * d_head))
    H = ref.split_heads(M, num_heads, d_head).copy()
    copy = frozen(H)
    merged = ref.merge_heads(H)
    assert merged.shape == (n, num_heads * d_head)
    np.testing.assert_array_equal(merged, M)
    assert_unchanged([H], copy)


# -------------------------------------------------------------------------------- attention


def per_slice_attention(Q, K, V):
    """Attention on each 2-D slice separately, the meaning of the leading axes."""
    lead = Q.shape[:-2]
    outs = np.empty((*lead, Q.shape[-2], V.shape[-1]))
    weights = np.empty((*lead, Q.shape[-2], K.shape[-2]))
    for idx in product(*(range(s) for s in lead)):
        outs[idx], weights[idx] = ref.attention(Q[idx], K[idx], V[idx])
    return outs, weights


@pytest.mark.parametrize("lead", [(), (3,), (2, 3)])
def test_attention_treats_leading_axes_as_independent_batches(lead):
    n, m, d_k, d_v = 2, 5, 4, 3  # all different, so a swapped axis cannot go unnoticed
    Q, K, V = (RNG.normal(size=(*lead, r, c)) for r, c in ((n, d_k), (m, d_k), (m, d_v)))
    copies = frozen(Q, K, V)
    out, weights = ref.attention(Q, K, V)
    assert out.shape == (*lead, n, d_v) and weights.shape == (*lead, n, m)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    if lead:
        expected_out, expected_weights = per_slice_attention(Q, K, V)
        np.testing.assert_allclose(out, expected_out, rtol=1e-12)
        np.testing.assert_allclose(weights, expected_weights, rtol=1e-12)
    assert_unchanged([Q, K, V], copies)


def test_attention_scales_by_the_square_root_of_the_key_width():
    Q = np.array([[2 * math.log(3.0), 0.0, 0.0, 0.0]])  # score log 3 after dividing by sqrt(4)
    K = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    _, weights = ref.attention(Q, K, np.eye(2))
    np.testing.assert_allclose(weights, [[0.25, 0.75]])


def test_attention_is_finite_on_large_scores():
    Q = np.array([[100.0, 0.0]])
    K = np.array([[100.0, 0.0], [-100.0, 0.0]])
    out, weights = ref.attention(Q, K, np.eye(2))
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(weights))


# --------------------------------------------------------------------- multi-head attention


@pytest.mark.parametrize("d_model, num_heads", [(8, 3), (8, 5), (6, 4), (4, 0)])
def test_multi_head_attention_rejects_heads_that_do_not_divide_d_model(d_model, num_heads):
    X = RNG.normal(size=(3, d_model))
    Ws = [RNG.normal(size=(d_model, d_model)) for _ in range(4)]
    with pytest.raises(ValueError):
        ref.multi_head_attention(X, *Ws, num_heads)


@pytest.mark.parametrize("n, d_model, num_heads", [(1, 4, 2), (3, 8, 8), (5, 6, 1), (4, 6, 3)])
def test_multi_head_attention_shapes_and_inputs_untouched(n, d_model, num_heads):
    X = RNG.normal(size=(n, d_model))
    Ws = [RNG.normal(size=(d_model, d_model)) for _ in range(4)]
    copies = frozen(X, *Ws)
    out, weights = ref.multi_head_attention(X, *Ws, num_heads)
    assert out.shape == (n, d_model) and weights.shape == (num_heads, n, n)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    assert_unchanged([X, *Ws], copies)


# ------------------------------------------------------------------------------ head pairs


def test_distinct_head_pairs_is_a_sorted_list_of_int_tuples_with_i_below_j():
    weights = ref.softmax(RNG.normal(size=(4, 3, 3)))
    weights[3] = weights[1]
    copy = frozen(weights)
    pairs = ref.distinct_head_pairs(weights)
    assert pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)]
    assert all(type(i) is int and type(j) is int for i, j in pairs)
    assert_unchanged([weights], copy)


def test_distinct_head_pairs_counts_a_difference_of_exactly_atol_as_equal():
    a = np.full((1, 2, 2), 0.5)
    b = a + 0.25
    assert ref.distinct_head_pairs(np.concatenate([a, b]), atol=0.25) == []
    assert ref.distinct_head_pairs(np.concatenate([a, b]), atol=0.2) == [(0, 1)]


def test_distinct_head_pairs_of_one_head_is_empty():
    assert ref.distinct_head_pairs(np.ones((1, 2, 2)) / 2) == []


# ------------------------------------------------------------------------- parameter counts


def test_parameter_counts_accepts_a_generator_and_keeps_its_order():
    counts = ref.parameter_counts(12, (h for h in [6, 1, 3]))
    assert list(counts) == [6, 1, 3]
    assert set(counts.values()) == {4 * 12 * 12}


@pytest.mark.parametrize("heads, bad", [([2, 3], "3"), ([5], "5"), ([0], "0")])
def test_parameter_counts_names_the_head_count_that_does_not_divide(heads, bad):
    with pytest.raises(ValueError, match=bad):
        ref.parameter_counts(8, heads)


# ------------------------------------------------------------------------- adapter functions


@pytest.mark.parametrize(
    "kwargs",
    [{"bias": True}, {"bias": False, "add_bias_kv": True}, {"bias": False, "kdim": 3, "vdim": 3}],
    ids=["bias", "add_bias_kv", "kdim_vdim"],
)
def test_weights_from_torch_rejects_modules_it_cannot_reproduce(kwargs):
    with pytest.raises(ValueError):
        ref_cc.weights_from_torch(torch.nn.MultiheadAttention(4, 2, **kwargs))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_weights_from_torch_returns_float64_copies_and_leaves_the_module_alone(dtype):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(4, 2, bias=False, dtype=dtype)
    before = {k: v.clone() for k, v in mha.state_dict().items()}
    weights = ref_cc.weights_from_torch(mha)
    assert all(W.dtype == np.float64 and W.shape == (4, 4) for W in weights)
    for W in weights:
        W += 1.0  # the returned arrays belong to the caller
    assert all(torch.equal(v, before[k]) for k, v in mha.state_dict().items())


@pytest.mark.parametrize(
    "dtype, batch_first", list(product([torch.float32, torch.float64], [False, True]))
)
def test_cross_check_matches_for_every_dtype_and_layout(dtype, batch_first):
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(8, 2, bias=False, dtype=dtype, batch_first=batch_first)
    X = RNG.normal(size=(5, 8))
    copy = frozen(X)
    result = ref_cc.cross_check(mha, X)
    assert set(result) == {"output_max_abs_diff", "weights_max_abs_diff", "match"}
    assert result["match"] is True
    assert isinstance(result["output_max_abs_diff"], float)
    assert_unchanged([X], copy)
