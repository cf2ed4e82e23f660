"""The reference solutions reproduce the module's verified numbers and honour the contract."""

import numpy as np
import pytest
import torch

from solutions import crosscheck as ref_cc
from solutions import multihead as ref


def module_example(num_heads=2, seed=7):
    np.random.seed(seed)
    n, d_model = 5, 8
    X = np.random.randn(n, d_model)
    Ws = [np.random.randn(d_model, d_model) for _ in range(4)]
    return X, Ws, num_heads


def test_module_example_head_weights_for_token_0_match_the_module_text():
    X, Ws, h = module_example()
    _, weights = ref.multi_head_attention(X, *Ws, h)
    assert np.round(weights[0][0], 3).tolist() == [0, 0, 0.424, 0.576, 0]
    assert np.round(weights[1][0], 3).tolist() == [0, 0, 0, 0, 1]


def test_module_example_matches_the_modules_per_head_loop():
    X, (Wq, Wk, Wv, Wo), h = module_example()
    d_head = 8 // h
    outs = []
    for i in range(h):
        cols = slice(i * d_head, (i + 1) * d_head)
        q, k, v = (X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols]
        s = q @ k.T / np.sqrt(d_head)
        w = np.exp(s - s.max(-1, keepdims=True))
        outs.append((w / w.sum(-1, keepdims=True)) @ v)
    out, _ = ref.multi_head_attention(X, Wq, Wk, Wv, Wo, h)
    np.testing.assert_allclose(out, np.concatenate(outs, axis=-1) @ Wo, rtol=1e-12)


@pytest.mark.parametrize("bias, expected", [(False, 256), (True, 288)])
def test_parameter_count_is_the_same_for_1_2_4_8_heads(bias, expected):
    assert ref.parameter_counts(8, [1, 2, 4, 8], bias=bias) == {
        1: expected,
        2: expected,
        4: expected,
        8: expected,
    }


def test_four_heads_on_the_module_input_all_differ_pairwise():
    X, Ws, _ = module_example()
    _, weights = ref.multi_head_attention(X, *Ws, 4)
    assert ref.distinct_head_pairs(weights) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch_first", [True, False])
def test_adapter_reproduces_torch_multihead_attention(dtype, batch_first):
    torch.manual_seed(3)
    mha = torch.nn.MultiheadAttention(8, 2, bias=False, batch_first=batch_first, dtype=dtype)
    X = np.random.default_rng(0).standard_normal((5, 8))
    report = ref_cc.cross_check(mha, X)
    assert report["match"] is True
    limit = 1e-5 if dtype == torch.float32 else 1e-12
    assert report["output_max_abs_diff"] < limit and report["weights_max_abs_diff"] < limit


def test_solutions_do_not_loop_over_heads_or_tokens():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(ref))
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For | ast.While)]
    assert loops == []
