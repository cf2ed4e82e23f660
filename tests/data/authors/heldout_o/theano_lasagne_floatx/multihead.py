# Modelled on Theano-era attention code (Theano's `T.nnet.softmax`, which only takes a matrix and
# normalises its rows; `T.batched_dot(Q, K.dimshuffle(0, 2, 1))` for a stack of matrices;
# Lasagne's layers with `dimshuffle` and `lasagne.layers.count_params`; `theano.config.floatX`
# set to 'float32' for the GPU): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

floatX = "float32"  # theano.config.floatX, as in every .theanorc of the time


def _softmax_rows(m):
    # T.nnet.softmax: a matrix in, each row normalised, stabilised by the row max
    e_m = np.exp(m - m.max(axis=1, keepdims=True))
    return e_m / e_m.sum(axis=1, keepdims=True)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # the softmax op only works on matrices: bring `axis` last, flatten the rest into rows
    x_last = np.moveaxis(x, axis, -1)
    rows = x_last.reshape(-1, x_last.shape[-1])
    return _softmax_rows(rows).reshape(x.shape)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    n_tokens, n_features = M.shape
    if n_features != num_heads * d_head:
        raise ValueError("input has %d features, expected num_heads * d_head = %d * %d"
                         % (n_features, num_heads, d_head))
    # (tokens, heads, d_head).dimshuffle(1, 0, 2)
    return M.reshape((n_tokens, num_heads, d_head)).transpose((1, 0, 2))


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, n_tokens, d_head = H.shape
    # dimshuffle(1, 0, 2) then flatten(2)
    return H.transpose((1, 0, 2)).reshape((n_tokens, num_heads * d_head))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    # T.batched_dot(Q, K.dimshuffle(0, 2, 1)) / T.sqrt(d_k)
    scores = np.einsum("bij,bkj->bik", Q, K) / np.sqrt(d_k)
    weights = softmax(scores)
    # T.batched_dot(weights, V)
    out = np.einsum("bik,bkj->bij", weights, V)
    return out, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    n_tokens, d_model = X.shape
    if d_model % num_heads != 0:
        raise ValueError("d_model=%d is not divisible by num_heads=%d" % (d_model, num_heads))
    d_head = d_model // num_heads
    Q = split_heads(np.dot(X, Wq), num_heads, d_head)
    K = split_heads(np.dot(X, Wk), num_heads, d_head)
    V = split_heads(np.dot(X, Wv), num_heads, d_head)
    heads, weights = attention(Q, K, V)
    return np.dot(merge_heads(heads), Wo), weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError("num_heads=%d does not divide d_model=%d" % (h, d_model))
        # lasagne.layers.count_params: sum of np.prod(p.get_value().shape) over the layer's params
        shapes = [(d_model, d_model)] * 4          # W_q, W_k, W_v, W_o
        if bias:
            shapes += [(d_model,)] * 4             # b_q, b_k, b_v, b_o
        counts[h] = int(sum(np.prod(s) for s in shapes))
    return counts
