# Modelled on explosion/thinc (the `Ops` API spaCy runs on: `ops.softmax(X, inplace=..., axis=-1,
# temperature=1.0)` written with `inplace=True` to save a copy, `ops.gemm(x, y, trans2=True)` on
# 2-D arrays only, `ops.flatten(Xs)` / `ops.unflatten(X, lengths)` to join and cut lists of
# arrays, `ops.xp.allclose` in its tests, `model.get_dim("nO")` / `model.get_param("W")`):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

xp = np  # ops.xp on NumpyOps


def gemm(x, y, trans1=False, trans2=False):
    # ops.gemm: 2-D matrices only
    if trans1:
        x = x.T
    if trans2:
        y = y.T
    return xp.dot(x, y)


def flatten(Xs):
    # ops.flatten: one array out of a list of arrays, joined along the first axis
    return xp.concatenate(list(Xs), axis=0)


def softmax(x: np.ndarray, axis: int = -1, inplace: bool = True,
            temperature: float = 1.0) -> np.ndarray:
    if temperature != 1.0:
        x = x / temperature
    if not inplace:
        x = x.copy()
    x -= x.max(axis=axis, keepdims=True)
    xp.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    nI = M.shape[1]
    if nI != num_heads * d_head:
        raise ValueError(f"Expected {num_heads} * {d_head} = {num_heads * d_head} columns, got {nI}")
    return xp.stack([M[:, h * d_head:(h + 1) * d_head] for h in range(num_heads)])


def merge_heads(H: np.ndarray) -> np.ndarray:
    # the heads are a list of (n, d_head) arrays: join them back into one array
    return flatten(H)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lead = Q.shape[:-2]
    nQ, nK, nV = Q.shape[-2], K.shape[-2], V.shape[-1]
    scale = 1.0 / xp.sqrt(Q.shape[-1])
    weights = xp.zeros(lead + (nQ, nK), dtype=np.result_type(Q, K, V))
    out = xp.zeros(lead + (nQ, nV), dtype=weights.dtype)
    for idx in np.ndindex(*lead):
        scores = gemm(Q[idx], K[idx], trans2=True) * scale
        weights[idx] = softmax(scores, axis=-1)
        out[idx] = gemm(weights[idx], V[idx])
    return out, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    nO = X.shape[1]
    if nO % num_heads:
        raise ValueError(f"nO={nO} must be a multiple of the number of heads ({num_heads})")
    d_head = nO // num_heads
    Q = split_heads(gemm(X, Wq), num_heads, d_head)
    K = split_heads(gemm(X, Wk), num_heads, d_head)
    V = split_heads(gemm(X, Wv), num_heads, d_head)
    context, weights = attention(Q, K, V)
    return gemm(merge_heads(context), Wo), weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(weights.shape[0]):
        for j in range(i + 1, weights.shape[0]):
            if not xp.allclose(weights[i], weights[j], atol=atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for nH in head_counts:
        if d_model % nH != 0:
            raise ValueError(f"nH={nH} does not divide nO={d_model}")
        params = {"Wq": (d_model, d_model), "Wk": (d_model, d_model),
                  "Wv": (d_model, d_model), "Wo": (d_model, d_model)}
        if bias:
            params.update({"bq": (d_model,), "bk": (d_model,), "bv": (d_model,), "bo": (d_model,)})
        counts[nH] = sum(int(np.prod(shape)) for shape in params.values())
    return counts
