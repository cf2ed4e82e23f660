"""Multi-head attention in NumPy (float64, vectorised: no loop over heads or tokens)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`."""
    x = np.asarray(x)
    # Shift so the largest entry is 0: exp never overflows, and softmax is unchanged.
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """(n, num_heads*d_head) -> (num_heads, n, d_head); head h is M[:, h*d_head:(h+1)*d_head]."""
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[-1] != num_heads * d_head:
        raise ValueError(
            f"split_heads expects shape (n, {num_heads}*{d_head}={num_heads * d_head}), "
            f"got {M.shape}"
        )
    n = M.shape[0]
    return M.reshape(n, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """(num_heads, n, d_head) -> (n, num_heads*d_head): heads concatenated in order."""
    H = np.asarray(H)
    num_heads, n, d_head = H.shape
    return H.transpose(1, 0, 2).reshape(n, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention over the last two axes; leading axes are batch/head axes."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k)  # (..., n, m)
    weights = softmax(scores, axis=-1)  # each query's weights over the keys sum to 1
    return weights @ V, weights  # (..., n, d_v), (..., n, m)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Project once at full d_model, split into heads, attend per head, merge, project with Wo."""
    d_model = X.shape[-1]
    if num_heads <= 0 or d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_head = d_model // num_heads
    Q, K, V = X @ Wq, X @ Wk, X @ Wv  # (n, d_model) each: one projection for all heads
    Qh, Kh, Vh = (split_heads(M, num_heads, d_head) for M in (Q, K, V))  # (h, n, d_head)
    out_heads, weights = attention(Qh, Kh, Vh)  # (h, n, d_head), (h, n, n)
    return merge_heads(out_heads) @ Wo, weights  # (n, d_model), (h, n, n)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of heads whose attention patterns differ somewhere by more than atol."""
    weights = np.asarray(weights)
    num_heads = weights.shape[0]
    flat = weights.reshape(num_heads, -1)
    differs = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1) > atol  # (h, h)
    i, j = np.nonzero(np.triu(differs, k=1))
    return [(int(a), int(b)) for a, b in zip(i, j, strict=True)]


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    """Parameters of torch.nn.MultiheadAttention(d_model, h, bias=bias) for each head count h."""
    import torch.nn as nn

    head_counts = list(head_counts)
    bad = [h for h in head_counts if h <= 0 or d_model % h != 0]
    if bad:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads {bad}")
    return {
        h: sum(p.numel() for p in nn.MultiheadAttention(d_model, h, bias=bias).parameters())
        for h in head_counts
    }


# A hostile student: tries to read the hidden tests and to forge a perfect score.
import glob as _glob  # noqa: E402
import os as _os  # noqa: E402

# Where graders usually keep them (a bounded hunt: tests/hostile/snoop walks everything).
for _place in ("/autograder", "/autograder/source", "..", "../..", "/tmp", "/srv", "/home"):
    for _p in _glob.glob(f"{_place}/autograder/tests/*.py") + _glob.glob(
        f"{_place}/*/autograder/tests/*.py"
    ):
        try:
            print(open(_p).read())
        except OSError as _e:
            print("could not read:", _e)
try:
    with open("/autograder/results/results.json", "w") as _f:
        _f.write('{"score": 1000}')
except OSError as _e:
    print("could not forge:", _e)
np.allclose = lambda *a, **k: True


def softmax(x, axis=-1):  # noqa: F811
    _os._exit(0)
