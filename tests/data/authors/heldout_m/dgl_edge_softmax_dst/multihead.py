# Modelled on dmlc/dgl: `python/dgl/nn/pytorch/conv/dotgatconv.py` (DotGatConv:
# `graph.apply_edges(fn.u_dot_v('ft', 'ft', 'a'))`, `e / math.sqrt(out_feats)`,
# `edge_softmax(graph, e)`, `graph.update_all(fn.u_mul_e('ft', 'sa', 'attn'), fn.sum('attn',
# 'agg_u'))`), `python/dgl/ops/edge_softmax.py` (`norm_by='dst'`: the scores of the edges
# entering each destination node normalised together), GATConv's `(N, num_heads, out_feats)`
# layout with `.flatten(1)` and `raise DGLError(...)`: written in that style for this test
# corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class DGLError(Exception):
    """Base DGL exception, as dgl._ffi.base.DGLError."""


def softmax(x, axis=-1):
    x = np.asarray(x)
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / np.sum(z, axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
    if M.shape[-1] != num_heads * d_head:
        raise ValueError(f"feature size {M.shape[-1]} != {num_heads} heads x {d_head} out_feats")
    # GATConv: feat_src = self.fc(h_src).view(-1, self._num_heads, self._out_feats)
    ft = M.reshape(-1, num_heads, d_head)
    return np.transpose(ft, (1, 0, 2))


def merge_heads(H):
    # rst.flatten(1) on the (N, num_heads, out_feats) layout
    return np.transpose(H, (1, 0, 2)).reshape(H.shape[1], -1)


def _complete_graph(num_src, num_dst):
    # every query node linked to every key node: src = query, dst = key
    src, dst = np.meshgrid(np.arange(num_src), np.arange(num_dst), indexing="ij")
    return src.ravel(), dst.ravel()


def _edge_softmax(e, dst, num_dst):
    # norm_by='dst': every edge's score normalised over the edges that enter its destination
    e_max = np.full(num_dst, -np.inf)
    np.maximum.at(e_max, dst, e)
    e = np.exp(e - e_max[dst])
    e_sum = np.zeros(num_dst)
    np.add.at(e_sum, dst, e)
    return e / e_sum[dst]


def attention(Q, K, V):
    lead = Q.shape[:-2]
    n, d_k = Q.shape[-2:]
    m = K.shape[-2]
    out = np.empty(lead + (n, V.shape[-1]))
    weights = np.empty(lead + (n, m))
    src, dst = _complete_graph(n, m)
    for idx in np.ndindex(*lead):
        q, k, v = Q[idx], K[idx], V[idx]
        # fn.u_dot_v: one score per edge
        a = np.sum(q[src] * k[dst], axis=-1) / np.sqrt(d_k)
        sa = _edge_softmax(a, dst, m)
        w = np.zeros((n, m))
        w[src, dst] = sa
        weights[idx] = w
        # fn.u_mul_e + fn.sum, gathered at the query
        out[idx] = w @ v
    return out, weights


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    in_feats = X.shape[1]
    if in_feats % num_heads != 0:
        raise DGLError(
            "in_feats {} is not divisible by num_heads {}".format(in_feats, num_heads)
        )
    out_feats = in_feats // num_heads
    q = split_heads(X @ Wq, num_heads, out_feats)
    k = split_heads(X @ Wk, num_heads, out_feats)
    v = split_heads(X @ Wv, num_heads, out_feats)
    rst, a = attention(q, k, v)
    return merge_heads(rst) @ Wo, a


def distinct_head_pairs(weights, atol=1e-6):
    pairs = []
    num_heads = weights.shape[0]
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads:
            raise ValueError(f"num_heads {num_heads} does not divide {d_model}")
        out_feats = d_model // num_heads
        # fc_q, fc_k, fc_v, fc_o: Linear(in_feats, out_feats * num_heads, bias=False)
        n = 4 * d_model * out_feats * num_heads
        if bias:
            # GATConv's one bias of shape (num_heads * out_feats,)
            n += num_heads * out_feats
        counts[num_heads] = n
    return counts
