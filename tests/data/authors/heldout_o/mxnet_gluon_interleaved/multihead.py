# Modelled on Apache MXNet Gluon (`nd.reshape` with the special codes `(0, -4, num_heads, -1)`,
# `F.batch_dot(q, k, transpose_b=True)` on 3-D batches with leading axes folded by `-3`,
# `F.softmax(x, axis=-1)`, `gluon.nn.Dense(units, in_units=..., use_bias=True)` whose bias is on
# by default, `block.collect_params()` for counting, and the contrib ops
# `interleaved_matmul_selfatt_qk` / `_valatt` that expect a fused projection laid out head by
# head): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x_max = x.max(axis=axis, keepdims=True)
    e = np.exp(x - x_max)
    return e / e.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # x.reshape((0, -4, num_heads, -1)).transpose((1, 0, 2)): 0 keeps the token axis, -4 splits
    # the feature axis into (num_heads, -1)
    return M.reshape(M.shape[0], num_heads, -1).transpose((1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    # transpose((1, 0, 2)).reshape((0, -3)): -3 merges the last two axes
    T = H.transpose((1, 0, 2))
    return T.reshape(T.shape[0], T.shape[1] * T.shape[2])


def _batch_dot(a, b, transpose_b=False):
    # F.batch_dot only takes (B, M, K) x (B, K, N)
    if transpose_b:
        b = b.transpose((0, 2, 1))
    return np.matmul(a, b)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lead = Q.shape[:-2]
    n, d_k = Q.shape[-2:]
    m, d_v = K.shape[-2], V.shape[-1]
    # fold every leading axis into one batch axis (reshape((-3, 0, 0)))
    q = Q.reshape(-1, n, d_k)
    k = K.reshape(-1, m, d_k)
    v = V.reshape(-1, m, d_v)
    att_score = _batch_dot(q, k, transpose_b=True) / np.sqrt(d_k)
    att_weights = softmax(att_score, axis=-1)
    out = _batch_dot(att_weights, v)
    return out.reshape(lead + (n, d_v)), att_weights.reshape(lead + (n, m))


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    units = X.shape[-1]
    if units % num_heads != 0:
        raise ValueError("In MultiHeadAttention, the units should be divided exactly by the "
                         "number of heads. Received units={}, num_heads={}".format(units, num_heads))
    d_head = units // num_heads
    query = split_heads(np.dot(X, Wq), num_heads, d_head)
    key = split_heads(np.dot(X, Wk), num_heads, d_head)
    value = split_heads(np.dot(X, Wv), num_heads, d_head)
    context, att_weights = attention(query, key, value)
    return np.dot(merge_heads(context), Wo), att_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    out = []
    num_heads = weights.shape[0]
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            # (a - b).abs().max().asscalar()
            if np.abs(weights[i] - weights[j]).max().item() > atol:
                out.append((i, j))
    return out


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_heads in head_counts:
        if d_model % num_heads != 0:
            raise ValueError("units={} not divisible by num_heads={}".format(d_model, num_heads))
        # proj_query, proj_key, proj_value, proj_out = nn.Dense(units, in_units=units)
        params = {}
        for prefix in ("query_", "key_", "value_", "proj_"):
            params[prefix + "weight"] = (d_model, d_model)
            params[prefix + "bias"] = (d_model,)          # Dense: use_bias=True
        # sum(np.prod(p.shape) for p in block.collect_params().values())
        counts[num_heads] = int(sum(np.prod(s) for s in params.values()))
    return counts
