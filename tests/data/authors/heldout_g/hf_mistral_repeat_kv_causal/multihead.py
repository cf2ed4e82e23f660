# Modelled on huggingface/transformers, models/mistral/modeling_mistral.py (MistralAttention,
# repeat_kv, eager_attention_forward: view(bsz, q_len, -1, head_dim).transpose(1, 2);
# torch.matmul(query, key_states.transpose(2, 3)) * scaling; the causal_mask added to the scores;
# softmax(dim=-1, dtype=torch.float32).to(query.dtype)): written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # upcast attention to fp32
    x32 = x.astype(np.float32)
    e = np.exp(x32 - x32.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    q_len, hidden = M.shape
    if hidden != num_heads * d_head:
        raise ValueError(f"hidden size {hidden} != num_heads ({num_heads}) * head_dim ({d_head})")
    return M.reshape(q_len, num_heads, d_head).swapaxes(0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, q_len, head_dim = H.shape
    return H.swapaxes(0, 1).reshape(q_len, num_heads * head_dim)


def repeat_kv(hidden_states: np.ndarray, n_rep: int) -> np.ndarray:
    """(num_key_value_heads, seqlen, head_dim) -> (num_attention_heads, seqlen, head_dim)"""
    if n_rep == 1:
        return hidden_states
    return np.repeat(hidden_states, n_rep, axis=-3)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    scaling = head_dim ** -0.5
    attn_weights = np.matmul(Q, np.swapaxes(K, 2, 3)) * scaling
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, V)
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    q_len, hidden_size = X.shape
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size {hidden_size} is not divisible by num_heads {num_heads}")
    head_dim = hidden_size // num_heads
    num_key_value_heads = num_heads  # no grouped-query attention here
    num_key_value_groups = num_heads // num_key_value_heads
    scaling = head_dim ** -0.5

    query_states = (X @ Wq).reshape(q_len, -1, head_dim).transpose(1, 0, 2)
    key_states = (X @ Wk).reshape(q_len, -1, head_dim).transpose(1, 0, 2)
    value_states = (X @ Wv).reshape(q_len, -1, head_dim).transpose(1, 0, 2)

    key_states = repeat_kv(key_states, num_key_value_groups)
    value_states = repeat_kv(value_states, num_key_value_groups)

    attn_weights = np.matmul(query_states, key_states.transpose(0, 2, 1)) * scaling
    # the decoder's causal mask: min value above the diagonal
    causal_mask = np.triu(np.full((q_len, q_len), np.finfo(attn_weights.dtype).min), k=1)
    attn_weights = attn_weights + causal_mask

    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, value_states)

    attn_output = attn_output.transpose(1, 0, 2).reshape(q_len, -1)
    attn_output = attn_output @ Wo
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    out = []
    for a in range(len(weights)):
        for b in range(a + 1, len(weights)):
            if np.abs(weights[a] - weights[b]).max() > atol:
                out.append((a, b))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"hidden_size {d_model} is not divisible by num_heads {num_heads}")
        head_dim = d_model // num_heads
        # q_proj, k_proj, v_proj, o_proj: nn.Linear(..., bias=False)
        q = d_model * num_heads * head_dim
        kv = 2 * d_model * num_heads * head_dim
        o = num_heads * head_dim * d_model
        result[num_heads] = q + kv + o
    return result
