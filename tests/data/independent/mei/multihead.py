"""Multi-head attention in NumPy: the exercises of Module 08.

Fill in every function marked ``YOUR CODE HERE``; each one raises ``NotImplementedError``
until you do.
Check your work with ``mha-check`` (or ``python -m mha_check``) from the folder above this one.

Rules for every function:
- use NumPy only (``parameter_counts`` may import torch);
- never modify an input array in place;
- vectorise: no Python loop over heads or tokens is needed anywhere (loops still get full marks).

Notation: ``n`` tokens, model width ``d_model``, ``num_heads`` heads of width
``d_head = d_model // num_heads``.
"""

from __future__ import annotations

from collections.abc import Iterable

import math
import itertools

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` along ``axis``.

    Inputs:
    - x: float array of any shape, e.g. attention scores of shape (..., n, m).
    - axis: the axis to normalise over (default: the last one).

    Returns:
    - an array of the same shape as ``x``: every entry in [0, 1], and the entries along ``axis``
      sum to 1.

    It must stay finite for scores as large as 1e4 in magnitude: exp(1e4) overflows, so subtract
    the maximum along ``axis`` first (softmax does not change when you shift all inputs by the
    same constant). Keep the reduced axis (``keepdims=True``) so the max and the sum broadcast
    back along the right axis.
    """
    shifted = np.subtract(x, np.amax(x, axis=axis, keepdims=True))
    numerator = np.exp(shifted)
    denominator = np.sum(numerator, axis=axis, keepdims=True)
    return numerator / denominator


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """Split projected features into heads.

    Multi-head attention projects Q, K and V once at full ``d_model`` and then cuts the feature
    axis into ``num_heads`` equal chunks, one per head.

    Inputs:
    - M: array of shape (n, num_heads * d_head), for example Q = X @ Wq.
    - num_heads: number of heads.
    - d_head: features per head.

    Returns:
    - array of shape (num_heads, n, d_head) whose slice ``[h]`` equals
      ``M[:, h*d_head:(h+1)*d_head]``: head h gets the h-th block of consecutive features
      of every token.

    Raises:
    - ValueError if ``M.shape[-1] != num_heads * d_head``.

    Hint: a reshape alone gives the right shape but mixes tokens and heads; think about which
    axis must move to the front.
    """
    if M.shape[-1] != num_heads * d_head:
        raise ValueError("M has %d features, not num_heads*d_head=%d" % (M.shape[-1], num_heads * d_head))
    return np.swapaxes(M.reshape(M.shape[0], num_heads, d_head), 0, 1)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """Concatenate per-head outputs back along the feature axis: the inverse of ``split_heads``.

    Inputs:
    - H: array of shape (num_heads, n, d_head).

    Returns:
    - array of shape (n, num_heads * d_head) whose columns ``h*d_head:(h+1)*d_head`` hold
      ``H[h]``: heads in order, so ``merge_heads(split_heads(M, h, d)) == M``.
    """
    return np.swapaxes(H, 0, 1).reshape(H.shape[1], -1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention, batched over any leading axes.

    Inputs:
    - Q: queries, shape (..., n, d_k).
    - K: keys, shape (..., m, d_k).
    - V: values, shape (..., m, d_v).
      The leading axes ``...`` (for example a head axis) are the same for all three and are
      treated independently.

    Returns a tuple ``(out, weights)``:
    - weights: shape (..., n, m), ``softmax(Q @ K^T / sqrt(d_k))`` over the last axis; row i says
      how much query i attends to each key, and sums to 1.
    - out: shape (..., n, d_v), ``weights @ V``.

    Transpose only the last two axes of K (``np.swapaxes(K, -1, -2)``): ``K.T`` reverses every
    axis of a 3-D array. Scale by the square root of the *key* width d_k (per head, not d_model).
    """
    KT = np.swapaxes(K, -1, -2)
    S = (Q @ KT) / math.sqrt(K.shape[-1])
    W = softmax(S, -1)
    return W @ V, W


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention.

    Inputs:
    - X: token representations, shape (n, d_model).
    - Wq, Wk, Wv, Wo: projection matrices, each (d_model, d_model), applied as ``X @ W``.
    - num_heads: number of heads; ``d_head = d_model // num_heads``.

    Returns a tuple ``(out, weights)``:
    - out: shape (n, d_model): project Q, K, V once, split each into heads, attend within each
      head, merge the heads and project the result with Wo.
    - weights: shape (num_heads, n, n), head h's attention weights.

    Raises:
    - ValueError if ``d_model % num_heads != 0`` (heads must be equal-sized chunks).

    Reuse your ``split_heads``, ``attention`` and ``merge_heads``.
    """
    dm = X.shape[-1]
    if dm % num_heads != 0:
        raise ValueError("d_model % num_heads != 0")
    dh = dm // num_heads
    heads = [split_heads(X @ W, num_heads, dh) for W in (Wq, Wk, Wv)]
    context, w = attention(*heads)
    return merge_heads(context) @ Wo, w


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    """Which pairs of heads attend differently?

    Inputs:
    - weights: shape (num_heads, n, n), per-head attention weights (as from
      ``multi_head_attention``).
    - atol: two heads count as the same pattern when every entry differs by at most ``atol``.

    Returns:
    - a list of ``(i, j)`` tuples of ints with ``i < j``, in lexicographic order, one for every
      pair of heads whose patterns are *not* all within ``atol`` of each other.
      Example: with 3 heads where heads 0 and 2 are identical: ``[(0, 1), (1, 2)]``.
    """
    H = weights.shape[0]
    pairs = []
    for i, j in itertools.combinations(range(H), 2):
        if (np.abs(weights[i] - weights[j]) > atol).any():
            pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    """Count the parameters of PyTorch's multi-head attention for several head counts.

    Inputs:
    - d_model: model width (``embed_dim``).
    - head_counts: head counts to try, e.g. ``[1, 2, 4, 8]``.
    - bias: whether the module has biases.

    Returns:
    - dict ``{h: total number of parameters of torch.nn.MultiheadAttention(d_model, h, bias=bias)}``
      for every h in ``head_counts`` (count them with ``p.numel()`` over ``.parameters()``).

    Raises:
    - ValueError, naming the offending head count, if some h does not divide d_model.
    """
    out = {}
    for h in head_counts:
        if h < 1 or d_model % h:
            raise ValueError("bad head count %r for d_model %d" % (h, d_model))
        n = 4 * d_model**2
        if bias:
            n += 3 * d_model + d_model
        out[h] = n
    return out
