# Modelled on meta-llama/llama, llama/model.py (Attention.forward: xq.view(bsz, seqlen, n_heads,
# head_dim), repeat_kv, xq.transpose(1, 2), keys.transpose(2, 3) / math.sqrt(self.head_dim),
# F.softmax(scores.float(), dim=-1).type_as(xq), and Transformer.forward's
# torch.triu(full(-inf), diagonal=1) mask whenever seqlen > 1): written in that style for this
# test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seqlen = M.shape[0]
    # xq.view(bsz, seqlen, n_local_heads, head_dim) then .transpose(1, 2), without the batch
    xq = M.reshape(seqlen, num_heads, d_head)
    return xq.transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
    seqlen = H.shape[1]
    return H.transpose(1, 0, 2).reshape(seqlen, -1)


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """np.repeat(x, n_rep, axis=1) for (bs, n_kv_heads, slen, head_dim)"""
    if n_rep == 1:
        return x
    bs, n_kv_heads, slen, head_dim = x.shape
    return np.broadcast_to(
        x[:, :, None, :, :], (bs, n_kv_heads, n_rep, slen, head_dim)
    ).reshape(bs, n_kv_heads * n_rep, slen, head_dim)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask=None) -> tuple[np.ndarray, np.ndarray]:
    head_dim = Q.shape[-1]
    scores = np.matmul(Q, np.swapaxes(K, 2, 3)) / math.sqrt(head_dim)
    if mask is not None:
        scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
    scores = softmax(scores.astype(np.float32), axis=-1).astype(Q.dtype)
    output = np.matmul(scores, V)  # (bs, n_local_heads, seqlen, head_dim)
    return output, scores


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seqlen, dim = X.shape
    if dim % num_heads != 0:
        raise ValueError(f"dim {dim} is not divisible by n_heads {num_heads}")
    head_dim = dim // num_heads
    n_kv_heads = Wk.shape[1] // head_dim
    n_rep = num_heads // n_kv_heads

    xq = split_heads(X @ Wq, num_heads, head_dim)[None]  # (1, n_heads, seqlen, head_dim)
    keys = split_heads(X @ Wk, n_kv_heads, head_dim)[None]
    values = split_heads(X @ Wv, n_kv_heads, head_dim)[None]
    keys = repeat_kv(keys, n_rep)
    values = repeat_kv(values, n_rep)

    mask = None
    if seqlen > 1:
        mask = np.triu(np.full((seqlen, seqlen), float("-inf")), k=1)

    output, scores = attention(xq, keys, values, mask)
    output = merge_heads(output[0])
    return output @ Wo, scores[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    n_heads = weights.shape[0]
    pairs = []
    for i in range(n_heads):
        for j in range(i + 1, n_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for n_heads in head_counts:
        if d_model % n_heads != 0:
            raise ValueError(f"n_heads {n_heads} does not divide dim {d_model}")
        head_dim = d_model // n_heads
        # wq, wk, wv, wo: ColumnParallelLinear / RowParallelLinear with bias=False
        counts[n_heads] = (
            d_model * n_heads * head_dim  # wq
            + d_model * n_heads * head_dim  # wk (n_kv_heads = n_heads)
            + d_model * n_heads * head_dim  # wv
            + n_heads * head_dim * d_model  # wo
        )
    return counts
