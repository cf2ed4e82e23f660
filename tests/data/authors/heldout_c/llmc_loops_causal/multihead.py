# Modelled on karpathy/llm.c, train_gpt2.c (attention_forward: explicit loops over b, t, h, the
# pre-attention row up to t2 <= t, maxval starting at -10000.0f, expsum, the rest of the row left
# at zero; softmax_forward; qkv indexed as [t, h * hs + i]), ported to NumPy loops for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    rows = x.reshape(-1, x.shape[-1])
    probs = np.zeros_like(rows)
    for r in range(rows.shape[0]):
        maxval = -10000.0
        for v in rows[r]:
            if v > maxval:
                maxval = v
        expsum = 0.0
        for i in range(rows.shape[1]):
            probs[r, i] = np.exp(rows[r, i] - maxval)
            expsum += probs[r, i]
        probs[r] /= expsum
    return np.moveaxis(probs.reshape(x.shape), -1, axis)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    T = M.shape[0]
    NH, hs = num_heads, d_head
    out = np.zeros((NH, T, hs))
    for t in range(T):
        for h in range(NH):
            for i in range(hs):
                out[h, t, i] = M[t, h * hs + i]
    return out


def merge_heads(H: np.ndarray) -> np.ndarray:
    NH, T, hs = H.shape
    out = np.zeros((T, NH * hs))
    for t in range(T):
        for h in range(NH):
            out[t, h * hs : (h + 1) * hs] = H[h, t]
    return out


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lead = Q.shape[:-2]
    T, hs = Q.shape[-2:]
    T2 = K.shape[-2]
    q = Q.reshape(-1, T, hs)
    k = K.reshape(-1, T2, hs)
    v = V.reshape(-1, T2, V.shape[-1])
    B = q.shape[0]
    scale = 1.0 / np.sqrt(hs)
    att = np.zeros((B, T, T2))
    out = np.zeros((B, T, v.shape[-1]))
    for b in range(B):
        for t in range(T):
            # pass 1: query dot key and maxval
            maxval = -10000.0
            preatt = np.zeros(T2)
            for t2 in range(min(t + 1, T2)):
                preatt[t2] = np.dot(q[b, t], k[b, t2]) * scale
                if preatt[t2] > maxval:
                    maxval = preatt[t2]
            # pass 2: exp and sum
            expsum = 0.0
            for t2 in range(min(t + 1, T2)):
                att[b, t, t2] = np.exp(preatt[t2] - maxval)
                expsum += att[b, t, t2]
            # pass 3: normalize; causal attention: the rest stays zero
            att[b, t] /= expsum
            # pass 4: accumulate weighted values
            for t2 in range(min(t + 1, T2)):
                out[b, t] += att[b, t, t2] * v[b, t2]
    return out.reshape(lead + (T, v.shape[-1])), att.reshape(lead + (T, T2))


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    T, C = X.shape
    if C % num_heads != 0:
        raise ValueError("C must be divisible by NH")
    hs = C // num_heads
    q = split_heads(X @ Wq, num_heads, hs)
    k = split_heads(X @ Wk, num_heads, hs)
    v = split_heads(X @ Wv, num_heads, hs)
    out, att = attention(q, k, v)
    return merge_heads(out) @ Wo, att


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    NH = weights.shape[0]
    pairs = []
    for h1 in range(NH):
        for h2 in range(h1 + 1, NH):
            if np.max(np.abs(weights[h1] - weights[h2])) > atol:
                pairs.append((h1, h2))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    C = d_model
    counts = {}
    for NH in head_counts:
        if NH <= 0 or C % NH != 0:
            raise ValueError(f"C={C} is not divisible by NH={NH}")
        # qkvw (3C, C) + attprojw (C, C); qkvb (3C) + attprojb (C)
        counts[NH] = 3 * C * C + C * C + ((3 * C + C) if bias else 0)
    return counts
