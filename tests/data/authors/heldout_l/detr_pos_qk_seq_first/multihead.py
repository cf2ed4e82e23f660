# Modelled on facebookresearch/detr: models/transformer.py (TransformerEncoderLayer.forward_post:
# `q = k = self.with_pos_embed(src, pos)`, `self.self_attn(q, k, value=src, ...)[0]`; the
# positional encodings "passed in MHattention"), models/position_encoding.py
# (PositionEmbeddingSine with num_pos_feats, temperature=10000, normalize=True and scale = 2 * pi
# as build_position_encoding makes it, `not_mask.cumsum`, `dim_t // 2`, sin/cos stacked and
# flattened) and main.py (`n_parameters = sum(p.numel() for p in model.parameters() if
# p.requires_grad)`): written in that style for this test corpus, not copied. The image's H x W
# grid becomes one row of n tokens, so the 2-D sine embedding becomes a 1-D one.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    M = np.asarray(M)
    n, c = M.shape
    if c != num_heads * d_head:
        raise ValueError(f"cannot split {c} channels into {num_heads} heads of {d_head}")
    return M.reshape(n, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    H = np.asarray(H)
    nhead, n, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(n, nhead * head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    attn_output_weights = Q @ np.swapaxes(K, -1, -2) / math.sqrt(head_dim)
    attn_output_weights = softmax(attn_output_weights, axis=-1)
    attn_output = attn_output_weights @ V
    return attn_output, attn_output_weights


def position_embedding_sine(n, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
    """
    This is a more standard version of the position embedding, very similar to the one
    used by the Attention is all you need paper, here for a single row of tokens.
    """
    if scale is not None and normalize is False:
        raise ValueError("normalize should be True if scale is passed")
    if scale is None:
        scale = 2 * math.pi
    not_mask = np.ones(n, dtype=bool)
    x_embed = np.cumsum(not_mask, dtype=np.float32)
    if normalize:
        eps = 1e-6
        x_embed = x_embed / (x_embed[-1:] + eps) * scale

    dim_t = np.arange(num_pos_feats, dtype=np.float32)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)

    pos_x = x_embed[:, None] / dim_t
    pos_x = np.stack((np.sin(pos_x[:, 0::2]), np.cos(pos_x[:, 1::2])), axis=2).reshape(n, -1)
    return pos_x


def with_pos_embed(tensor, pos: Optional[np.ndarray]):
    return tensor if pos is None else tensor + pos


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    src = np.asarray(X)
    n, d_model = src.shape
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model {d_model} must be divisible by nhead {num_heads}")
    head_dim = d_model // num_heads
    pos = position_embedding_sine(n, num_pos_feats=d_model, normalize=True)
    # positional encodings are passed in MHattention: queries and keys only
    q = k = with_pos_embed(src, pos)
    q = split_heads(q @ Wq, num_heads, head_dim)
    k = split_heads(k @ Wk, num_heads, head_dim)
    v = split_heads(src @ Wv, num_heads, head_dim)
    attn_output, attn_output_weights = attention(q, k, v)
    return merge_heads(attn_output) @ Wo, attn_output_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    weights = np.asarray(weights)
    nhead = weights.shape[0]
    return [
        (i, j)
        for i in range(nhead)
        for j in range(i + 1, nhead)
        if np.abs(weights[i] - weights[j]).max() > atol
    ]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from torch import nn

    n_parameters = {}
    for nhead in head_counts:
        if nhead <= 0 or d_model % nhead != 0:
            raise ValueError(f"nhead {nhead} does not divide d_model {d_model}")
        self_attn = nn.MultiheadAttention(d_model, nhead, bias=bias)
        n_parameters[nhead] = sum(p.numel() for p in self_attn.parameters() if p.requires_grad)
    return n_parameters
