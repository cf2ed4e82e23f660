# Modelled on pyg-team/pytorch_geometric: `torch_geometric/nn/conv/transformer_conv.py`
# (TransformerConv: `query = self.lin_query(x[1]).view(-1, H, C)`, `message()` with
# `alpha = (query_i * key_j).sum(dim=-1) / math.sqrt(self.out_channels)`,
# `softmax(alpha, index, ptr, size_i)`, `out.view(-1, self.heads * self.out_channels)`,
# `root_weight=True`: `out = out + x_r`), `torch_geometric/utils/softmax.py` (scatter max, exp,
# scatter sum + 1e-16) and a complete graph built without self-loops: written in that style for
# this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np


def _scatter(src, index, dim_size, reduce):
    out = np.full((dim_size,) + src.shape[1:], -np.inf if reduce == "max" else 0.0)
    if reduce == "max":
        np.maximum.at(out, index, src)
    else:
        np.add.at(out, index, src)
    return out


def softmax(x, axis=-1):
    # torch_geometric.utils.softmax: groups given by an index, here every slice along `axis`
    x = np.asarray(x, dtype=np.float64)
    moved = np.moveaxis(x, axis, -1)
    src = moved.reshape(-1)
    index = np.repeat(np.arange(src.size // max(moved.shape[-1], 1)), moved.shape[-1])
    num = src.size // max(moved.shape[-1], 1)
    src_max = _scatter(src, index, num, "max")[index]
    out = np.exp(src - src_max)
    out_sum = _scatter(out, index, num, "sum")[index]
    out = out / out_sum
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def split_heads(M, num_heads, d_head):
    H, C = num_heads, d_head
    if M.shape[-1] != H * C:
        raise ValueError(f"in_channels {M.shape[-1]} != heads * out_channels = {H * C}")
    return M.reshape(-1, H, C)


def merge_heads(H):
    heads, n, out_channels = H.shape
    return H.reshape(-1, heads * out_channels)


def attention(Q, K, V):
    alpha = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    alpha = softmax(alpha, axis=-1)
    return alpha @ V, alpha


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
    N, in_channels = X.shape
    H = num_heads
    if in_channels % H:
        raise ValueError(f"in_channels {in_channels} not divisible by heads {H}")
    C = in_channels // H
    query = (X @ Wq).reshape(-1, H, C)
    key = (X @ Wk).reshape(-1, H, C)
    value = (X @ Wv).reshape(-1, H, C)

    # fully connected graph, edge_index[0] = source j, edge_index[1] = target i
    edge_index = np.array(list(itertools.permutations(range(N), 2)), dtype=np.int64).T
    edge_index = edge_index.reshape(2, -1)
    j, i = edge_index[0], edge_index[1]

    # message(): one score per edge and head
    alpha = (query[i] * key[j]).sum(axis=-1) / math.sqrt(C)            # [E, H]
    alpha_max = _scatter(alpha, i, N, "max")[i]
    alpha = np.exp(alpha - alpha_max)
    alpha = alpha / (_scatter(alpha, i, N, "sum")[i] + 1e-16)
    msg = value[j] * alpha[:, :, None]                                  # [E, H, C]
    out = _scatter(msg, i, N, "sum")                                    # aggr='add'
    out = out.reshape(-1, H * C)                                        # concat=True

    weights = np.zeros((H, N, N))
    weights[:, i, j] = alpha.T
    out = out @ Wo
    # root_weight=True: out = out + x_r
    out = out + X
    return out, weights


def distinct_head_pairs(weights, atol=1e-6):
    H = weights.shape[0]
    flat = weights.reshape(H, -1)
    return [
        (a, b) for a, b in itertools.combinations(range(H), 2)
        if np.abs(flat[a] - flat[b]).max() > atol
    ]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    import torch

    counts = {}
    for heads in head_counts:
        if d_model % heads != 0:
            raise ValueError(f"heads={heads} must divide d_model={d_model}")
        mod = torch.nn.MultiheadAttention(d_model, heads, bias=bias)
        counts[heads] = sum(p.numel() for p in mod.parameters())
    return counts
