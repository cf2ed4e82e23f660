# Modelled on huggingface/transformers, models/codegen/modeling_codegen.py (CodeGenAttention:
# mp_num = 4, the fused qkv_proj reshaped to (..., mp_num, -1) and cut as
# `query, value, key = torch.split(qkv_split, local_dim, dim=-1)`; _split_heads(x, n_head,
# dim_head, mp_num) reshaping to (n_head // mp_num, dim_head) per shard; _merge_heads with
# permute(0, 2, 1, 3); _attn dividing by scale_attn = sqrt(head_dim); qkv_proj and out_proj
# built with bias=False; the "embed_dim must be divisible by num_attention_heads" ValueError):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

mp_num = 4  # model-parallel shards the checkpoints were trained with


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    e_x = np.exp(x - x_max)
    return e_x / np.sum(e_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (seq, mp_num, local_dim) as after qkv_split, then _split_heads
    x = M.reshape(M.shape[:-1] + (mp_num, -1))
    reshaped = x.reshape(x.shape[:-1] + (num_heads // mp_num, d_head))
    reshaped = reshaped.reshape(x.shape[:-2] + (-1,) + reshaped.shape[-1:])
    return reshaped.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_attention_heads, seq_len, attn_head_size = H.shape
    tensor = H.transpose(1, 0, 2)
    new_shape = tensor.shape[:-2] + (num_attention_heads * attn_head_size,)
    return tensor.reshape(new_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    scale_attn = np.sqrt(head_dim)
    attn_weights = np.matmul(Q, np.swapaxes(K, -1, -2))
    attn_weights = attn_weights / scale_attn
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
    embed_dim = X.shape[-1]
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(
            f"embed_dim must be divisible by num_attention_heads (got `embed_dim`: {embed_dim}"
            f" and `num_attention_heads`: {num_heads})."
        )
    query = split_heads(X @ Wq, num_heads, head_dim)
    key = split_heads(X @ Wk, num_heads, head_dim)
    value = split_heads(X @ Wv, num_heads, head_dim)
    attn_output, attn_weights = attention(query, key, value)
    attn_output = merge_heads(attn_output)
    attn_output = attn_output @ Wo
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n = len(weights)
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if not (np.abs(weights[i] - weights[j]) <= atol).all()]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    result = {}
    for num_attention_heads in head_counts:
        if d_model % num_attention_heads != 0:
            raise ValueError(
                f"embed_dim must be divisible by num_attention_heads (got `embed_dim`: {d_model}"
                f" and `num_attention_heads`: {num_attention_heads})."
            )
        # qkv_proj = nn.Linear(embed_dim, embed_dim * 3, bias=False)
        # out_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        result[num_attention_heads] = d_model * d_model * 3 + d_model * d_model
    return result
