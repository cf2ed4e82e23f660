"""Unknown mistakes (no catalogued misconception) are explained by the properties they break."""

import math

import numpy as np
import pytest

from mha_grader.diagnose import diagnose
from solutions.multihead import merge_heads, softmax, split_heads
from tests.mutants.build import reference_env


def _scale_after_softmax(Q, K, V):
    w = softmax(Q @ np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])
    return w @ V, w


def _ignores_v(Q, K, V):
    w = softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
    return w @ K, w


def _counts_extra_bias(d_model, head_counts, bias=False):  # a term of no simple formula (one
    # bias too many, 5 * d_model, is counts-extra-terms since the ninth authors' set)
    return {h: 4 * d_model * d_model + (int(d_model**1.5) if bias else 0) for h in head_counts}


def _split_then_transpose(M, num_heads, d_head):
    return np.swapaxes(split_heads(M, num_heads, d_head), -1, -2)


def _mha_values_from_keys(X, Wq, Wk, Wv, Wo, num_heads):
    from solutions.multihead import attention

    # values from Wq + Wk: no one matrix in another's place (mha-weights-misassigned, set H)
    d_head = X.shape[-1] // num_heads
    heads = [split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wq + Wk)]
    out, w = attention(*heads)
    return merge_heads(out) @ Wo, w


@pytest.mark.parametrize(
    ("qid", "override", "words"),
    [
        ("attention", _scale_after_softmax, "its rows do not sum to 1 (they sum to less than 1)"),
        ("attention", _ignores_v, "its out is not its own weights times V"),
        # (attention's weights transposed: attention-weights-layout since the ninth set)
        ("parameter_counts", _counts_extra_bias, "has 624 parameters whatever the number"),
        ("split_heads", _split_then_transpose, "right result transposed"),
        ("multi_head_attention", _mha_values_from_keys, "does not change when Wv changes"),
    ],
    ids=lambda v: getattr(v, "__name__", None) or str(v)[:12],
)
def test_an_unknown_mistake_is_explained_by_the_property_it_breaks(qid, override, words):
    d = diagnose(qid, reference_env(**{qid: override}))
    assert d is not None
    assert d.misconceptions == ()
    assert words in d.message, d.message


def test_a_count_that_ignores_bias_is_the_catalogued_mistake_with_its_bias_parameters():
    def counts(d_model, head_counts, bias=False):
        return {h: 4 * d_model * d_model for h in head_counts}

    d = diagnose("parameter_counts", reference_env(parameter_counts=counts))
    assert d.misconceptions[0] == "counts-ignore-bias"
    assert "4 * d_model bias parameters" in d.message, d.message


def test_a_right_function_hears_no_property_words():
    env = reference_env()
    assert all(diagnose(q, env) is None for q in ("attention", "split_heads", "parameter_counts"))
