# Modelled on triton-lang/triton, python/tutorials/06-fused-attention.py (the Flash Attention v2
# tutorial: `qk_scale = sm_scale; qk_scale *= 1.44269504  # 1/log(2)`, `p = tl.math.exp2(qk)`,
# `m_i`/`l_i` running max and sum, the (Z, H, N_CTX, HEAD_DIM) layout, `assert HEAD_DIM_Q ==
# HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V`): written in that style for this test corpus, not
# copied. One block covers the whole row here (no tiling), everything else is the kernel's math.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

RCP_LN2 = 1.4426950408889634  # = 1.0 / ln(2)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # same trick as the kernel: subtract the running max, exponentiate with exp2
    # (exp2 is the fast path on the GPU), divide by the row sum l_i at the end
    x = np.asarray(x)
    m_i = np.max(x, axis=axis, keepdims=True)
    p = np.exp2(x - m_i)
    l_i = np.sum(p, axis=axis, keepdims=True)
    return p / l_i


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (N_CTX, H * HEAD_DIM) -> (H, N_CTX, HEAD_DIM), like q of shape (Z, H, N_CTX, HEAD_DIM)
    M = np.asarray(M)
    N_CTX, width = M.shape
    if width != num_heads * d_head:
        raise ValueError(
            f"split_heads: expected {num_heads} * {d_head} = {num_heads * d_head} features, got {width}"
        )
    return M.reshape(N_CTX, num_heads, d_head).transpose(1, 0, 2).copy()


def merge_heads(H: np.ndarray) -> np.ndarray:
    H = np.asarray(H)
    N_HEAD, N_CTX, HEAD_DIM = H.shape
    return H.transpose(1, 0, 2).reshape(N_CTX, N_HEAD * HEAD_DIM)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # shape constraints
    HEAD_DIM_Q, HEAD_DIM_K = Q.shape[-1], K.shape[-1]
    HEAD_DIM_V = V.shape[-1]
    assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V
    sm_scale = 1.0 / math.sqrt(HEAD_DIM_K)
    # load scales
    qk_scale = sm_scale
    qk_scale *= RCP_LN2  # 1/log(2)
    # -- compute qk ----
    qk = np.matmul(Q, np.swapaxes(K, -1, -2))
    p = softmax(qk * qk_scale, axis=-1)
    # -- update output accumulator --
    o = np.matmul(p, V)
    return o, p


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X)
    N_CTX, D_MODEL = X.shape
    if num_heads <= 0 or D_MODEL % num_heads != 0:
        raise ValueError(f"d_model={D_MODEL} is not divisible by num_heads={num_heads}")
    HEAD_DIM = D_MODEL // num_heads
    q = split_heads(X @ Wq, num_heads, HEAD_DIM)
    k = split_heads(X @ Wk, num_heads, HEAD_DIM)
    v = split_heads(X @ Wv, num_heads, HEAD_DIM)
    o, p = attention(q, k, v)
    return merge_heads(o) @ Wo, p


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    weights = np.asarray(weights)
    N_HEAD = weights.shape[0]
    pairs = []
    for i in range(N_HEAD):
        for j in range(i + 1, N_HEAD):
            # compare like the tutorial's test: allclose with rtol=0
            if not np.allclose(weights[i], weights[j], atol=atol, rtol=0):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for H in head_counts:
        # shape constraints
        assert d_model % H == 0, f"num_heads={H} must divide d_model={d_model}"
        mha = torch.nn.MultiheadAttention(d_model, H, bias=bias)
        counts[H] = sum(p.numel() for p in mha.parameters())
    return counts
