# Modelled on facebookresearch/esm (esm/multihead_attention.py: `q *= self.scaling` on the
# projected queries, `torch.bmm(q, k.transpose(1, 2))`, `utils_softmax`, the rotary embedding
# applied to q and k when `use_rotary_embeddings`; esm/rotary_embedding.py: `rotate_half`,
# `inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))`, `emb = torch.cat((freqs,
# freqs), dim=-1)`; the model's size read from `sum(v.numel() for v in state_dict().values())`):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # utils_softmax(x, dim=-1)
    z = x - np.max(x, axis=axis, keepdims=True)
    ez = np.exp(z)
    return ez / ez.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    tgt_len, embed_dim = M.shape
    if embed_dim != num_heads * d_head:
        raise ValueError(f"embed_dim {embed_dim} != num_heads {num_heads} * head_dim {d_head}")
    # q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1), with bsz = 1
    return M.reshape(tgt_len, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
    num_heads, tgt_len, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(tgt_len, num_heads * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaling = Q.shape[-1] ** -0.5
    Q *= scaling
    attn_weights = np.matmul(Q, np.swapaxes(K, -1, -2))
    attn_probs = softmax(attn_weights, axis=-1)
    attn = np.matmul(attn_probs, V)
    return attn, attn_probs


def rotate_half(x):
    x1, x2 = np.split(x, 2, axis=-1)
    return np.concatenate((-x2, x1), axis=-1)


def apply_rotary_pos_emb(x, cos, sin):
    cos = cos[: x.shape[-2], :]
    sin = sin[: x.shape[-2], :]
    return (x * cos) + (rotate_half(x) * sin)


def rotary_embedding(q, k, seq_dimension=-2):
    dim = q.shape[-1]
    inv_freq = 1.0 / (10000 ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    t = np.arange(k.shape[seq_dimension], dtype=np.float64)
    freqs = np.einsum("i,j->ij", t, inv_freq)
    emb = np.concatenate((freqs, freqs), axis=-1)
    cos_cached, sin_cached = np.cos(emb), np.sin(emb)
    return apply_rotary_pos_emb(q, cos_cached, sin_cached), apply_rotary_pos_emb(k, cos_cached,
                                                                                  sin_cached)


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
        raise ValueError("embed_dim must be divisible by num_heads")
    q = split_heads(X @ Wq, num_heads, head_dim)
    k = split_heads(X @ Wk, num_heads, head_dim)
    v = split_heads(X @ Wv, num_heads, head_dim)
    # use_rotary_embeddings=True, as in ESM-2
    q, k = rotary_embedding(q, k)
    attn, attn_weights = attention(q, k, v)
    return merge_heads(attn) @ Wo, attn_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError(f"embed_dim {d_model} must be divisible by num_heads {num_heads}")
        head_dim = d_model // num_heads
        # the state dict of ESM's MultiheadAttention: k/v/q/out_proj weights (and biases) and
        # the rotary embedding's inv_freq buffer
        state_dict = {
            "k_proj.weight": (d_model, d_model), "v_proj.weight": (d_model, d_model),
            "q_proj.weight": (d_model, d_model), "out_proj.weight": (d_model, d_model),
            "rot_emb.inv_freq": ((head_dim + 1) // 2,),
        }
        if bias:
            for name in ("k_proj.bias", "v_proj.bias", "q_proj.bias", "out_proj.bias"):
                state_dict[name] = (d_model,)
        counts[num_heads] = int(sum(np.prod(shape) for shape in state_dict.values()))
    return counts
