# Modelled on google/gemma_pytorch, gemma/model.py (GemmaAttention.forward: the fused qkv_proj
# split into q, k, v; xq.view(batch_size, -1, num_heads, head_dim); scaling =
# query_pre_attn_scalar ** -0.5 applied to q before torch.matmul(q, k.transpose(2, 3));
# Gemma 2's attn_logit_softcapping (scores / cap, tanh, * cap); F.softmax(scores.float(),
# dim=-1).type_as(q); qkv_proj and o_proj with bias=False): written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

ATTN_LOGIT_SOFTCAPPING = 50.0  # Gemma 2 config
QUERY_PRE_ATTN_SCALAR = None  # None: head_dim


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # F.softmax(scores.float(), dim=-1).type_as(q)
    x32 = x.astype(np.float32)
    e = np.exp(x32 - np.max(x32, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    input_len = M.shape[0]
    # [input_len, num_heads, head_dim] -> [num_heads, input_len, head_dim]
    return M.reshape(input_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # [num_heads, input_len, head_dim] -> [input_len, hidden_dim]
    input_len = H.shape[1]
    return H.transpose(1, 0, 2).reshape(input_len, -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    query_pre_attn_scalar = QUERY_PRE_ATTN_SCALAR or head_dim
    scaling = query_pre_attn_scalar ** -0.5

    q = Q * scaling
    scores = np.matmul(q, np.swapaxes(K, -1, -2))
    if ATTN_LOGIT_SOFTCAPPING is not None:
        scores = scores / ATTN_LOGIT_SOFTCAPPING
        scores = np.tanh(scores)
        scores = scores * ATTN_LOGIT_SOFTCAPPING
    scores = softmax(scores, axis=-1)
    output = np.matmul(scores, V)
    return output, scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    input_len, hidden_size = X.shape
    if hidden_size % num_heads != 0:
        raise ValueError(f"hidden_size {hidden_size} is not a multiple of num_heads {num_heads}")
    head_dim = hidden_size // num_heads
    q_size = num_heads * head_dim
    kv_size = num_heads * head_dim
    query_pre_attn_scalar = QUERY_PRE_ATTN_SCALAR or head_dim
    scaling = query_pre_attn_scalar ** -0.5

    qkv_proj = np.concatenate([Wq, Wk, Wv], axis=1)
    qkv = X @ qkv_proj
    xq, xk, xv = np.split(qkv, [q_size, q_size + kv_size], axis=-1)

    # [num_heads, input_len, head_dim]
    q = split_heads(xq, num_heads, head_dim)
    k = split_heads(xk, num_heads, head_dim)
    v = split_heads(xv, num_heads, head_dim)

    # [num_heads, input_len, input_len]
    q = q * scaling
    scores = np.matmul(q, k.transpose(0, 2, 1))
    if ATTN_LOGIT_SOFTCAPPING is not None:
        scores = scores / ATTN_LOGIT_SOFTCAPPING
        scores = np.tanh(scores)
        scores = scores * ATTN_LOGIT_SOFTCAPPING
    scores = softmax(scores, axis=-1)

    # [num_heads, input_len, head_dim]
    output = np.matmul(scores, v)
    # [input_len, hidden_dim]
    output = merge_heads(output)
    output = output @ Wo
    return output, scores


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if not np.all(np.abs(weights[i] - weights[j]) <= atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads {num_heads} does not divide hidden_size {d_model}")
        head_dim = d_model // num_heads
        num_kv_heads = num_heads
        # qkv_proj: Linear(hidden, (num_heads + 2 * num_kv_heads) * head_dim, bias=False)
        qkv_proj = d_model * (num_heads + 2 * num_kv_heads) * head_dim
        # o_proj: Linear(num_heads * head_dim, hidden, bias=False)
        o_proj = num_heads * head_dim * d_model
        counts[num_heads] = qkv_proj + o_proj
    return counts
