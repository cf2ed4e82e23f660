# Modelled on huggingface/transformers, src/transformers/models/blip/modeling_blip.py
# (BlipAttention: `self.qkv = nn.Linear(self.embed_dim, 3 * self.embed_dim)`,
# `mixed_qkv.reshape(bsz, tgt_len, 3, self.num_heads, embed_dim // self.num_heads)
# .permute(2, 0, 3, 1, 4)`, `query_states, key_states, value_states = mixed_qkv[0], mixed_qkv[1],
# mixed_qkv[2]`, `attention_scores * self.scale` with `self.scale = self.head_dim**-0.5`,
# `context_layer.permute(0, 2, 1, 3)`, the `ValueError` "embed_dim must be divisible by
# num_heads"; Blip-2 / InstructBLIP's qkv bias `cat(q_bias, zeros_like(v_bias), v_bias)`, no
# key bias) and the model tests' `torch.allclose(..., atol=1e-4)`: written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.amax(x, axis=axis, keepdims=True)
    exp_x = np.exp(x - x_max)
    return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    tgt_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(
            f"embed_dim must be num_heads * head_dim (got `embed_dim`: {embed_dim} and "
            f"`num_heads`: {num_heads}, `head_dim`: {d_head})."
        )
    return M.reshape(tgt_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    context_layer = H.transpose(1, 0, 2)
    new_context_layer_shape = context_layer.shape[:-2] + (H.shape[0] * H.shape[2],)
    return context_layer.reshape(new_context_layer_shape)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** -0.5
    attention_scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    attention_scores = attention_scores * scale
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = np.matmul(attention_probs, V)
    return context_layer, attention_probs


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
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim} and "
            f"`num_heads`: {num_heads})."
        )
    qkv = np.concatenate([Wq, Wk, Wv], axis=-1)
    mixed_qkv = (X @ qkv).reshape(tgt_len, 3, num_heads, head_dim).transpose(1, 2, 0, 3)
    query_states, key_states, value_states = mixed_qkv[0], mixed_qkv[1], mixed_qkv[2]
    context_layer, attention_probs = attention(query_states, key_states, value_states)
    context_layer = merge_heads(context_layer)
    output = context_layer @ Wo
    return output, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if not np.allclose(weights[i], weights[j], rtol=0.0, atol=atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(
                f"embed_dim must be divisible by num_heads (got `embed_dim`: {d_model} and "
                f"`num_heads`: {num_heads})."
            )
        qkv = d_model * 3 * d_model
        projection = d_model * d_model
        if bias:
            qkv += 3 * d_model  # q_bias, k_bias, v_bias (torch keeps all three, unlike Blip-2)
            projection += d_model
        counts[num_heads] = qkv + projection
    return counts
