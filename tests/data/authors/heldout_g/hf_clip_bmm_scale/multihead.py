# Modelled on huggingface/transformers, models/clip/modeling_clip.py (CLIPAttention: self.scale =
# head_dim ** -0.5; query_states = q_proj(hidden_states) * self.scale; _shape with view(bsz,
# seq_len, num_heads, head_dim).transpose(1, 2); proj_shape = (bsz * num_heads, -1, head_dim) and
# torch.bmm; attn_weights.view(bsz, num_heads, tgt_len, src_len) for output_attentions):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)


def _shape(tensor: np.ndarray, seq_len: int, num_heads: int, head_dim: int) -> np.ndarray:
    return tensor.reshape(seq_len, num_heads, head_dim).transpose(1, 0, 2)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, embed_dim = M.shape
    if num_heads * d_head != embed_dim:
        raise ValueError(
            f"embed_dim must be num_heads * head_dim (got `embed_dim`: {embed_dim} and"
            f" `num_heads`: {num_heads}, `head_dim`: {d_head})."
        )
    return _shape(M, seq_len, num_heads, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # fold every leading axis into one "bsz * num_heads" axis, as CLIP does before torch.bmm
    *lead, tgt_len, head_dim = Q.shape
    src_len = K.shape[-2]
    scale = head_dim ** -0.5
    query_states = (Q * scale).reshape(-1, tgt_len, head_dim)
    key_states = K.reshape(-1, src_len, head_dim)
    value_states = V.reshape(-1, src_len, V.shape[-1])

    attn_weights = np.matmul(query_states, key_states.transpose(0, 2, 1))
    attn_weights = softmax(attn_weights, axis=-1)
    attn_output = np.matmul(attn_weights, value_states)

    attn_weights = attn_weights.reshape(*lead, tgt_len, src_len)
    attn_output = attn_output.reshape(*lead, tgt_len, V.shape[-1])
    return attn_output, attn_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    tgt_len, embed_dim = X.shape
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ValueError(
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim} and"
            f" `num_heads`: {num_heads})."
        )
    query_states = split_heads(X @ Wq, num_heads, head_dim)
    key_states = split_heads(X @ Wk, num_heads, head_dim)
    value_states = split_heads(X @ Wv, num_heads, head_dim)

    attn_output, attn_weights = attention(query_states, key_states, value_states)

    attn_output = merge_heads(attn_output)
    attn_output = attn_output @ Wo
    return attn_output, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    return [
        (i, j)
        for i in range(num_heads)
        for j in range(i + 1, num_heads)
        if np.max(np.abs(weights[i] - weights[j])) > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"embed_dim must be divisible by num_heads (got `embed_dim`: {d_model} and"
                f" `num_heads`: {num_heads})."
            )
        # k_proj, v_proj, q_proj, out_proj = nn.Linear(embed_dim, embed_dim)
        counts[num_heads] = 4 * (d_model * d_model + d_model)
    return counts
