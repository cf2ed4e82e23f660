# Modelled on huggingface/transformers, models/qwen2/modeling_qwen2.py (Qwen2Attention:
# num_key_value_groups = num_attention_heads // num_key_value_heads, k_proj / v_proj
# num_key_value_heads * head_dim wide, `hidden_shape = (*input_shape, -1, self.head_dim)`,
# repeat_kv, eager_attention_forward with `scaling = head_dim ** -0.5` and the softmax in
# float32; q/k/v_proj with bias=True, o_proj with bias=False): written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    # upcast to fp32 like nn.functional.softmax(..., dtype=torch.float32), back to input dtype
    x32 = x.astype(np.float32) if x.dtype == np.float16 else x
    shifted = x32 - x32.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def split_heads(M, num_heads, d_head):
    input_shape = M.shape[:-1]
    hidden_shape = (*input_shape, -1, d_head)
    return np.swapaxes(M.reshape(hidden_shape), -3, -2)


def merge_heads(H):
    attn_output = np.swapaxes(H, -3, -2)
    return attn_output.reshape(*attn_output.shape[:-2], -1)


def repeat_kv(hidden_states, n_rep):
    """(num_key_value_heads, seqlen, head_dim) -> (num_attention_heads, seqlen, head_dim)"""
    if n_rep == 1:
        return hidden_states
    return np.repeat(hidden_states, n_rep, axis=-3)


def attention(Q, K, V, scaling=None):
    if scaling is None:
        scaling = Q.shape[-1] ** -0.5
    attn_weights = np.matmul(Q, np.swapaxes(K, -1, -2)) * scaling
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    hidden_size = X.shape[-1]
    if hidden_size % num_heads != 0:
        raise ValueError(
            f"hidden_size must be divisible by num_heads (got hidden_size: {hidden_size}"
            f" and num_heads: {num_heads})."
        )
    head_dim = hidden_size // num_heads
    # Qwen2 configs use fewer key/value heads than query heads (GQA)
    num_key_value_heads = num_heads // 2 if num_heads % 2 == 0 else num_heads
    num_key_value_groups = num_heads // num_key_value_heads
    kv_dim = num_key_value_heads * head_dim

    query_states = split_heads(X @ Wq, num_heads, head_dim)
    key_states = split_heads(X @ Wk[:, :kv_dim], num_key_value_heads, head_dim)
    value_states = split_heads(X @ Wv[:, :kv_dim], num_key_value_heads, head_dim)

    key_states = repeat_kv(key_states, num_key_value_groups)
    value_states = repeat_kv(value_states, num_key_value_groups)

    attn_output, attn_weights = attention(query_states, key_states, value_states,
                                          scaling=head_dim ** -0.5)
    attn_output = merge_heads(attn_output) @ Wo
    return attn_output, attn_weights


def distinct_head_pairs(weights, atol=1e-6):
    num_heads = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None, :]).reshape(num_heads, num_heads, -1).max(-1)
    return [(i, j) for i in range(num_heads) for j in range(i + 1, num_heads) if diff[i, j] > atol]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"hidden_size {d_model} is not divisible by num_heads {num_heads}")
        head_dim = d_model // num_heads
        q_proj = d_model * num_heads * head_dim + (num_heads * head_dim if bias else 0)
        k_proj = d_model * num_heads * head_dim + (num_heads * head_dim if bias else 0)
        v_proj = d_model * num_heads * head_dim + (num_heads * head_dim if bias else 0)
        o_proj = num_heads * head_dim * d_model  # bias=False
        counts[num_heads] = q_proj + k_proj + v_proj + o_proj
    return counts
