# Modelled on huggingface/transformers, models/wav2vec2/modeling_wav2vec2.py (Wav2Vec2Attention:
# `self.scaling = self.head_dim**-0.5` applied to the query projection, `_shape` by
# `view(bsz, seq_len, num_heads, head_dim).transpose(1, 2)`, `proj_shape = (bsz * num_heads, -1,
# head_dim)`, `torch.bmm`, the size checks that raise ValueError, dropout with `training`):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def _bmm(a, b):
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(f"bmm expects (b, n, k) x (b, k, m), got {a.shape} and {b.shape}")
    return np.einsum("bnk,bkm->bnm", a, b)


def _dropout(x, p=0.0, training=False):
    if not training or p == 0.0:
        return x
    keep = np.random.default_rng().random(x.shape) >= p
    return x * keep / (1.0 - p)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    shifted = x - np.amax(x, axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(
            f"embed_dim must be num_heads * head_dim (got `embed_dim`: {embed_dim}, "
            f"`num_heads`: {num_heads} and `head_dim`: {d_head})."
        )
    # _shape: view(bsz, seq_len, num_heads, head_dim).transpose(1, 2), with bsz = 1 dropped
    return M.reshape(seq_len, num_heads, d_head).swapaxes(0, 1).copy()


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, tgt_len, head_dim = H.shape
    # attn_output.transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
    return H.swapaxes(0, 1).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    *lead, tgt_len, head_dim = Q.shape
    src_len = K.shape[-2]
    v_dim = V.shape[-1]
    scaling = head_dim**-0.5
    # proj_shape = (bsz * num_heads, -1, head_dim)
    query_states = (Q * scaling).reshape(-1, tgt_len, head_dim)
    key_states = K.reshape(-1, src_len, head_dim)
    value_states = V.reshape(-1, src_len, v_dim)
    attn_weights = _bmm(query_states, key_states.transpose(0, 2, 1))
    attn_weights = softmax(attn_weights, axis=-1)
    attn_probs = _dropout(attn_weights, p=0.0, training=False)
    attn_output = _bmm(attn_probs, value_states)
    return (attn_output.reshape(*lead, tgt_len, v_dim),
            attn_weights.reshape(*lead, tgt_len, src_len))


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
    if (head_dim * num_heads) != embed_dim:
        raise ValueError(
            f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim}"
            f" and `num_heads`: {num_heads})."
        )
    scaling = head_dim**-0.5
    bsz = 1
    query_states = (X @ Wq) * scaling
    key_states = X @ Wk
    value_states = X @ Wv

    def _shape(tensor, seq_len, bsz):
        return tensor.reshape(bsz, seq_len, num_heads, head_dim).transpose(0, 2, 1, 3)

    proj_shape = (bsz * num_heads, -1, head_dim)
    query_states = _shape(query_states, tgt_len, bsz).reshape(*proj_shape)
    key_states = _shape(key_states, tgt_len, bsz).reshape(*proj_shape)
    value_states = _shape(value_states, tgt_len, bsz).reshape(*proj_shape)

    src_len = key_states.shape[1]
    attn_weights = _bmm(query_states, key_states.transpose(0, 2, 1))
    if attn_weights.shape != (bsz * num_heads, tgt_len, src_len):
        raise ValueError(
            f"Attention weights should be of size {(bsz * num_heads, tgt_len, src_len)}, but is"
            f" {attn_weights.shape}"
        )
    attn_weights = softmax(attn_weights, axis=-1)
    attn_probs = _dropout(attn_weights, p=0.0, training=False)
    attn_output = _bmm(attn_probs, value_states)

    attn_output = attn_output.reshape(bsz, num_heads, tgt_len, head_dim).transpose(0, 2, 1, 3)
    attn_output = attn_output.reshape(bsz, tgt_len, embed_dim)
    attn_output = attn_output @ Wo
    attn_weights_reshaped = attn_weights.reshape(bsz, num_heads, tgt_len, src_len)
    return attn_output[0], attn_weights_reshaped[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    flat = weights.reshape(num_heads, -1)
    diff = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1)
    return [(int(i), int(j)) for i, j in zip(*np.triu_indices(num_heads, k=1))
            if diff[i, j] > atol]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"embed_dim must be divisible by num_heads (got `embed_dim`: "
                             f"{d_model} and `num_heads`: {h}).")
        module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        counts[h] = sum(p.numel() for p in module.parameters())
    return counts
