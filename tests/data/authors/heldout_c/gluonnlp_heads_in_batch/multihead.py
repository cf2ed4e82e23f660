# Modelled on dmlc/gluon-nlp, src/gluonnlp/model/attention_cell.py (MultiHeadAttentionCell: _project
# reshapes to (0, 0, num_heads, -1), transposes (0, 2, 1, 3) and folds the heads into the batch;
# DotProductAttentionCell divides the query by sqrt(units) (div_sqrt_dim) before batch_dot; the
# context is unfolded with reshape(-4, ...)): written in that style for this test corpus, not
# copied. Without mxnet's reshape codes the heads are put back with one reshape.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = np.max(x, axis=axis, keepdims=True)
    ret = np.exp(x - x_max)
    return ret / np.sum(ret, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    if M.ndim != 2 or M.shape[1] != num_heads * d_head:
        raise ValueError(
            "The units of the projection (%d) must be num_heads * head_units (%d * %d)"
            % (M.shape[-1], num_heads, d_head)
        )
    # (length, units) -> (length, num_heads, head_units) -> (num_heads, length, head_units)
    return np.transpose(M.reshape(M.shape[0], num_heads, d_head), axes=(1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, length, head_units = H.shape
    return np.transpose(H, axes=(1, 0, 2)).reshape(length, num_heads * head_units)


def _div_sqrt_dim(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt(x.shape[-1])


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    query = _div_sqrt_dim(Q)
    att_score = np.matmul(query, np.swapaxes(K, -1, -2))
    att_weights = softmax(att_score, axis=-1)
    context_vec = np.matmul(att_weights, V)
    return context_vec, att_weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    length, units = X.shape
    if units % num_heads != 0:
        raise ValueError(
            "In MultiHeadAttention, the units should be divided exactly by the number of heads. "
            "Received units=%d, num_heads=%d" % (units, num_heads)
        )

    def _project(W):
        proj = X @ W
        proj = proj.reshape(length, num_heads, -1)
        return np.transpose(proj, axes=(1, 0, 2))  # (num_heads, length, head_units)

    query, key, value = _project(Wq), _project(Wk), _project(Wv)
    query = _div_sqrt_dim(query)
    att_score = np.matmul(query, np.transpose(key, axes=(0, 2, 1)))
    att_weights = softmax(att_score, axis=-1)
    context_vec = np.matmul(att_weights, value)  # (num_heads, length, head_units)
    context_vec = context_vec.reshape(length, units)
    return context_vec @ Wo, att_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    diff = np.abs(weights[:, None] - weights[None]).reshape(num_heads, num_heads, -1).max(axis=-1)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(diff > atol, k=1)))]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        if num_heads <= 0 or d_model % num_heads:
            raise ValueError("units=%d, num_heads=%d" % (d_model, num_heads))
        cell = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        counts[num_heads] = sum(p.numel() for p in cell.parameters())
    return counts
