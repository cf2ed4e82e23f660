# Modelled on jaymody/picoGPT, gpt2.py (softmax, attention(q, k, v, mask), mha with np.split,
# a causal mask and np.hstack): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def split_heads(M, num_heads, d_head):  # [n_seq, n_embd] -> [n_head, n_seq, n_embd/n_head]
    return np.stack(np.split(M, num_heads, axis=-1))


def merge_heads(H):  # [n_head, n_seq, n_embd/n_head] -> [n_seq, n_embd]
    return np.hstack(list(H))


def attention(q, k, v, mask=0.0):  # [n_q, d_k], [n_k, d_k], [n_k, d_v], [n_q, n_k] -> [n_q, d_v]
    w = softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask)
    return w @ v, w


def multi_head_attention(x, Wq, Wk, Wv, Wo, num_heads):  # [n_seq, n_embd] -> [n_seq, n_embd]
    n_seq, n_embd = x.shape
    if n_embd % num_heads:
        raise ValueError("n_embd must be divisible by n_head")
    # qkv projection, then split into heads
    q, k, v = (split_heads(x @ w, num_heads, n_embd // num_heads) for w in (Wq, Wk, Wv))

    # causal mask to hide future inputs from being attended to
    causal_mask = (1 - np.tri(n_seq)) * -1e10  # [n_seq, n_seq]

    # perform attention over each head
    outs = [attention(q[h], k[h], v[h], causal_mask) for h in range(num_heads)]
    out_heads = [o for o, _ in outs]
    weights = np.stack([w for _, w in outs])

    # merge heads, out projection
    return np.hstack(out_heads) @ Wo, weights


def distinct_head_pairs(weights, atol=1e-6):
    n_head = weights.shape[0]
    return [
        (i, j)
        for i in range(n_head)
        for j in range(i + 1, n_head)
        if np.abs(weights[i] - weights[j]).max() > atol
    ]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False):
    # c_attn is [n_embd, 3*n_embd] and c_proj is [n_embd, n_embd]: 4 * n_embd^2 whatever n_head
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"n_head={h} does not divide n_embd={d_model}")
        counts[h] = 4 * d_model * d_model + (4 * d_model if bias else 0)
    return counts
