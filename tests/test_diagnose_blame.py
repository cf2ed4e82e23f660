"""Blame lands where the bug is, and answers outside the catalogue get a plain explanation."""

import numpy as np

from mha_grader.diagnose import diagnose
from mha_grader.diagnose import mutants as mut
from solutions import multihead as ref
from tests.mutants.build import reference_env


def _global_softmax(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def test_attention_right_given_a_wrong_softmax_blames_softmax_and_says_attention_is_right():
    d = diagnose("attention", reference_env(softmax=_global_softmax))
    assert d.blame == "softmax" and d.misconceptions == ("softmax-global",)
    assert "attention is right given the functions it calls" in d.message
    assert "your softmax" in d.message


def test_multi_head_attention_blames_every_wrong_callee_by_name():
    env = reference_env(
        split_heads=mut.SPLIT["split-interleaved"][0],
        merge_heads=mut.MERGE["merge-reversed-heads"][0],
    )
    d = diagnose("multi_head_attention", env)
    assert d.misconceptions == ("split-interleaved", "merge-reversed-heads")
    assert d.blame == "split_heads"
    assert "your split_heads and your merge_heads" in d.message


def test_a_bug_two_calls_deep_is_blamed_on_the_deepest_function():
    d = diagnose("cross_check", reference_env(softmax=_global_softmax))
    assert d.blame == "softmax" and d.misconceptions == ("softmax-global",)
    assert "through your multi_head_attention" in d.message


def test_an_own_mistake_with_right_callees_says_the_callees_are_right():
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        return mut.MHA["mha-no-output-projection"][0](
            X, Wq, Wk, Wv, Wo, num_heads, ref.split_heads, ref.attention, ref.merge_heads
        )

    d = diagnose("multi_head_attention", reference_env(multi_head_attention=mha))
    assert d.misconceptions == ("mha-no-output-projection",)
    assert "split_heads, attention, merge_heads are right" in d.message


def test_an_own_mistake_on_top_of_a_wrong_callee_names_both():
    def attention(Q, K, V):
        w = _global_softmax(Q @ np.swapaxes(K, -1, -2))  # unscaled, through the own softmax
        return w @ V, w

    env = reference_env(softmax=_global_softmax, attention=attention)
    d = diagnose("attention", env)
    assert d.misconceptions == ("scale-missing", "softmax-global")
    assert d.blame == "attention" and "about your softmax" in d.message


def test_a_callee_that_always_raises_is_blamed_for_the_callers_failure():
    def split_heads(M, num_heads, d_head):
        raise ValueError("always")

    d = diagnose("multi_head_attention", reference_env(split_heads=split_heads))
    assert d.blame == "split_heads" and d.misconception is None
    assert "raised Python's ValueError" in d.message and "always" not in d.message


def test_an_answer_outside_the_catalogue_gets_a_specific_plain_explanation():
    def split_heads(M, num_heads, d_head):  # heads in reverse order: not a catalogued mistake
        return ref.split_heads(M, num_heads, d_head)[::-1]

    d = diagnose("split_heads", reference_env(split_heads=split_heads))
    assert d.misconception is None and d.tags == [] and d.blame == "split_heads"
    assert "off by more than 10%" in d.message and "every head" in d.message
    assert "right values, in the wrong places" in d.message


def test_a_wrong_shape_is_reported_as_shapes():
    def merge_heads(H):
        return H.reshape(H.shape[1], -1).T

    d = diagnose("merge_heads", reference_env(merge_heads=merge_heads))
    assert d.misconception is None
    assert "returned shape (6, 4): the lengths of (4, 6) in another order" in d.message


def test_weights_as_float32_are_named_and_told_to_become_float64():
    from solutions import crosscheck as ref_cc

    def weights_from_torch(mha):
        return tuple(W.astype(np.float32) for W in ref_cc.weights_from_torch(mha))

    d = diagnose("weights_from_torch", reference_env(weights_from_torch=weights_from_torch))
    assert d.misconceptions == ("adapter-float32-weights",) and "float64" in d.message


def test_distinct_head_pairs_and_parameter_counts_get_plain_explanations():
    def pairs(weights, atol=1e-6):
        return [(i, j) for i, j in ref.distinct_head_pairs(weights, atol)] + [(1, 1)]

    def counts(d_model, head_counts, bias=False):  # (+ h alone is counts-extra-terms, set I)
        return {h: 4 * d_model * d_model + h * h for h in head_counts}

    d = diagnose("distinct_head_pairs", reference_env(distinct_head_pairs=pairs))
    assert d.misconception is None and "i >= j" in d.message
    d = diagnose("parameter_counts", reference_env(parameter_counts=counts))
    assert d.misconception is None and "adds no parameters" in d.message


def test_an_unattempted_function_gets_no_diagnosis():
    def stub(*args, **kwargs):
        raise NotImplementedError

    assert diagnose("softmax", reference_env(softmax=stub)) is None


def test_messages_never_show_a_traceback_or_the_probe_values():
    env = reference_env(split_heads=lambda M, h, d: M.reshape(h, M.shape[0], d) + 1)
    d = diagnose("split_heads", env)
    assert "Traceback" not in d.message
    from mha_grader.diagnose.probes import split_probes

    first = split_probes()[0].args[0]
    assert f"{first[0, 0]:.3g}" not in d.message and f"{first[0, 0]:.4f}" not in d.message


def test_two_softmax_mistakes_at_once_get_both_ids():
    def no_shift_no_keepdims(x, axis=-1):
        return np.exp(x) / np.exp(x).sum(axis=axis)

    def fixed_axis_no_shift(x, axis=-1):
        return np.exp(x) / np.exp(x).sum(axis=0, keepdims=True)

    d = diagnose("softmax", reference_env(softmax=no_shift_no_keepdims))
    assert d.misconceptions == ("softmax-no-keepdims", "softmax-unstable")
    d = diagnose("softmax", reference_env(softmax=fixed_axis_no_shift))
    assert d.misconceptions == ("softmax-wrong-axis", "softmax-unstable")


def _causal(s):
    n, m = s.shape[-2:]
    return np.where(np.tril(np.ones((n, m), bool)), s, -np.inf)


def _masked_attention(Q, K, V):
    w = ref.softmax(_causal(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])))
    return w @ V, w


def test_a_composite_that_never_calls_its_wrong_callee_is_not_said_right_given_it():
    # minGPT's style: the same causal mask typed inline; the student's (masked) attention is
    # never called, so nothing may be said of it: the mistake is multi_head_attention's own
    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d = X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        w = ref.softmax(_causal(q @ np.swapaxes(k, -1, -2) / np.sqrt(d)))
        return ref.merge_heads(w @ v) @ Wo, w

    env = reference_env(attention=_masked_attention, multi_head_attention=mha)
    d = diagnose("multi_head_attention", env)
    assert d.blame == "multi_head_attention", d.message
    assert "mha-causal-mask" in d.misconceptions
    assert "right given" not in d.message


def test_a_composite_whose_mistake_a_wrong_callee_cancels_is_charged_with_both():
    # q and k swapped, undone by an attention that computes K Q^T: right only together
    def attention(Q, K, V):
        w = ref.softmax(K @ np.swapaxes(Q, -1, -2) / np.sqrt(Q.shape[-1]))
        return w @ V, w

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d = X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        out, w = attention(k, q, v)
        return ref.merge_heads(out) @ Wo, w

    env = reference_env(attention=attention, multi_head_attention=mha)
    d = diagnose("multi_head_attention", env)
    assert d.blame == "multi_head_attention", d.message
    assert "mha-qk-swapped" in d.misconceptions and "attention-scores-kq" in d.misconceptions
    assert "only because your attention" in d.message


def test_a_callee_called_with_an_extra_argument_keeps_its_own_results():
    # picoGPT's style: attention(q, k, v, mask) per head; the reference takes no mask, so
    # those calls are not answered by it, and the mask the composite builds is its own mistake
    def attention(Q, K, V, mask=0.0):
        w = ref.softmax(Q @ K.T / np.sqrt(Q.shape[-1]) + mask)  # right for 2-D only
        return w @ V, w

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        n, d = X.shape[0], X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        mask = (1 - np.tri(n)) * -1e10
        pairs = [attention(q[h], k[h], v[h], mask) for h in range(num_heads)]
        out = np.stack([o for o, _ in pairs])
        return ref.merge_heads(out) @ Wo, np.stack([w for _, w in pairs])

    env = reference_env(attention=attention, multi_head_attention=mha)
    d = diagnose("multi_head_attention", env)
    assert d.blame == "multi_head_attention" and "mha-causal-mask" in d.misconceptions, d.message
    assert "right given" not in d.message


def test_a_callee_wrong_only_while_its_caller_runs_is_told_as_state_not_as_its_own_mistake():
    # GPT-2's style (a layer-index scale in the config): the composite sets a module-level
    # setting around its call of attention, which changes what attention computes there
    setting = {"scale": 1.0}

    def attention(Q, K, V):
        scores = setting["scale"] * Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        w = ref.softmax(scores)
        return w @ V, w

    def mha(X, Wq, Wk, Wv, Wo, num_heads):
        d = X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d) for W in (Wq, Wk, Wv))
        setting["scale"] = 0.5
        try:
            out, w = attention(q, k, v)
        finally:
            setting["scale"] = 1.0
        return ref.merge_heads(out) @ Wo, w

    env = reference_env(attention=attention, multi_head_attention=mha)
    assert diagnose("attention", env) is None  # right on its own
    d = diagnose("multi_head_attention", env)
    assert d is not None
    assert "on those same inputs alone it is right" in d.message, d.message
    assert "while your multi_head_attention runs" in d.message
    assert "goes wrong only because" not in d.message


def test_two_mistakes_at_once_a_mask_passed_on_and_the_callees_overflow_are_both_named():
    """trax's causal multi_head_attention hands its mask to an attention whose inline softmax
    overflows on large scores (zeros, not nan): the mask is the composite's own mistake, read
    where nothing overflows, and the overflow is named as its attention's."""

    def attention(Q, K, V, mask=None):  # DotProductAttention: a logsumexp without the max
        dots = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            dots = np.where(mask, dots, np.full_like(dots, -1e9))
        w = np.exp(dots - np.log(np.sum(np.exp(dots), axis=-1, keepdims=True)))
        return w @ V, w

    def mha(X, Wq, Wk, Wv, Wo, num_heads):  # the causal mask passed on to attention
        d_head = X.shape[-1] // num_heads
        q, k, v = (ref.split_heads(X @ W, num_heads, d_head) for W in (Wq, Wk, Wv))
        out, w = attention(q, k, v, np.tril(np.ones((1, len(X), len(X)), dtype=bool)))
        return ref.merge_heads(out) @ Wo, w

    env = reference_env(attention=attention, multi_head_attention=mha)
    d = diagnose("attention", env)
    assert d.misconceptions == ("softmax-unstable",) and d.blame == "attention", d.message
    d = diagnose("multi_head_attention", env)
    assert d.misconceptions == ("mha-causal-mask", "softmax-unstable"), d.message
    assert d.blame == "multi_head_attention" and "about your attention" in d.message


def test_a_callees_mistake_is_not_named_on_inputs_the_composite_never_gave_it():
    """Raschka's wrapper: attention written for 2-D input (K.T, d_k = K.shape[1]) called head
    by head on 2-D slices, where it is right but for the naive softmax it calls, which overflows
    on large scores. The composite never gave it stacked heads: what went wrong there is the
    softmax, reached through attention, not attention's K.T."""

    def softmax(x, axis=-1):  # softmax_naive
        return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)

    def attention(Q, K, V):
        w = softmax(Q @ K.T / K.shape[1] ** 0.5, axis=-1)
        return w @ V, w

    def mha(X, Wq, Wk, Wv, Wo, num_heads):  # MultiHeadAttentionWrapper
        d = X.shape[1] // num_heads
        q, k, v = X @ Wq, X @ Wk, X @ Wv
        pairs = [
            attention(*(m[:, h * d : (h + 1) * d] for m in (q, k, v))) for h in range(num_heads)
        ]
        return np.concatenate([o for o, _ in pairs], axis=-1) @ Wo, np.stack([w for _, w in pairs])

    env = reference_env(softmax=softmax, attention=attention, multi_head_attention=mha)
    assert "attention-3d-transpose" in diagnose("attention", env).misconceptions
    d = diagnose("multi_head_attention", env)
    assert d.misconceptions == ("softmax-unstable",) and d.blame == "softmax", d.message
    assert "through your attention" in d.message and "K.T" not in d.message
