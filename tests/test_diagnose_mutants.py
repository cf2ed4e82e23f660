"""Each of the diagnosis' own mutants, run through diagnose(), gets exactly its own id."""

from functools import partial

import numpy as np
import pytest

from mha_grader.diagnose import diagnose
from mha_grader.diagnose import mutants as mut
from solutions import crosscheck as ref_cc
from solutions import multihead as ref
from tests.mutants.build import reference_env

REF_CALLEES = {"split": ref.split_heads, "attention": ref.attention, "merge": ref.merge_heads}
# multi_head_attention's mistakes named by the calls it made: the name when it never called
NEVER_CALLED = {"mha-prescaled-query": "scale-not-sqrt"}


def _cases():
    for qid, catalogue in [
        ("softmax", mut.SOFTMAX),
        ("split_heads", mut.SPLIT),
        ("merge_heads", mut.MERGE),
        ("attention", mut.ATTENTION),
        ("distinct_head_pairs", mut.DISTINCT),
        ("parameter_counts", mut.COUNTS),
        ("weights_from_torch", mut.ADAPTER),
    ]:
        for mid, fs in catalogue.items():
            for f in fs:
                yield pytest.param(qid, mid, f, id=f"{mid}-{f.__name__}")
    for mid, fs in mut.MHA.items():
        for f in fs:
            func = partial(f, **REF_CALLEES)
            # bound to the reference's callees, it never calls the student's attention: what
            # it does is then attention's work done inline (the calls name it, not its values)
            mid = NEVER_CALLED.get(mid, mid)
            yield pytest.param("multi_head_attention", mid, func, id=f"{mid}-{f.__name__}")
    for mid, variants in mut.CROSS_CHECK.items():
        for kw in variants:

            def check(mha, X, kw=kw):
                r = mut.cross_check_with(
                    mha, X, ref_cc.weights_from_torch, ref.multi_head_attention, **kw
                )
                return {**r, "match": max(r.values()) < 1e-6}

            yield pytest.param("cross_check", mid, check, id=f"{mid}-{kw}")


@pytest.mark.parametrize("qid, mid, func", list(_cases()))
def test_diagnosis_mutant_gets_exactly_its_own_id_and_blame(qid, mid, func):
    d = diagnose(qid, reference_env(**{qid: func}))
    assert d is not None
    assert d.misconceptions == (mid,) and d.misconception == mid
    assert d.blame == qid and d.tags == [f"misconception:{mid}"]


@pytest.mark.parametrize(
    "ids, func",
    [pytest.param(ids, f, id=f.__name__) for ids, fs in mut.ATTENTION_COMBINED.items() for f in fs],
)
def test_two_attention_mistakes_at_once_get_both_ids(ids, func):
    d = diagnose("attention", reference_env(attention=func))
    assert d is not None and d.misconceptions == ids and d.blame == "attention"


@pytest.mark.parametrize(
    "qid", ["softmax", "split_heads", "merge_heads", "attention", "multi_head_attention"]
)
def test_the_reference_itself_gets_no_diagnosis(qid):
    assert diagnose(qid, reference_env()) is None


def test_a_split_mistake_made_inside_multi_head_attention_is_named_there_without_a_call_claimed():
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d_head = X.shape[1] // num_heads
        heads = [np.reshape(X @ W, (num_heads, X.shape[0], d_head)) for W in (Wq, Wk, Wv)]
        out, weights = ref.attention(*heads)
        return ref.merge_heads(out) @ Wo, weights

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d.misconceptions == ("split-no-transpose",)
    assert d.blame == "multi_head_attention"
    # it never called split_heads: the words say so, and never "your split_heads returns"
    assert d.message.startswith(
        "Your multi_head_attention does the split into heads in its own code (it never calls "
        "your split_heads)"
    ), d.message
    assert "Your split_heads returns" not in d.message and "how it calls" not in d.message


def test_heads_split_and_merged_by_bare_reshapes_inside_multi_head_attention_get_both_ids():
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        n, d = X.shape
        if d % num_heads:
            raise ValueError(num_heads)
        q, k, v = ((X @ W).reshape(num_heads, n, d // num_heads) for W in (Wq, Wk, Wv))
        out, weights = ref.attention(q, k, v)
        return out.reshape(n, d) @ Wo, weights  # the split's twin: no transpose back

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d.misconceptions == ("split-no-transpose", "merge-no-transpose"), d.message
    assert d.blame == "multi_head_attention"
    assert "it never calls your split_heads or your merge_heads" in d.message, d.message
    assert "Your merge_heads reshapes" not in d.message


def test_a_softmax_mistake_written_inside_attention_is_blamed_on_attention():
    def attention(Q, K, V):
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        w = np.exp(s) / np.exp(s).sum(-1, keepdims=True)  # no max subtraction
        return w @ V, w

    d = diagnose("attention", reference_env(attention=attention))
    assert d.misconceptions == ("softmax-unstable",) and d.blame == "attention"
