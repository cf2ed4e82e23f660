# Modelled on awslabs/sockeye (sockeye/layers.py, PyTorch Sockeye 3: time-major
# (length, batch, depth) activations, `MultiHeadAttentionBase._attend` scaling the queries with
# `queries * self.depth_per_head ** -0.5` before `dot_attention`, which takes the scaled
# queries and applies no scale of its own, `split_heads` / `combine_heads` by reshape and
# transpose, `utils.check_condition` run over a model's settings before anything is built):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def check_condition(condition: bool, error_message: str):
    if not condition:
        raise ValueError(error_message)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """(length, depth) -> (heads, length, depth_per_head)"""
    length, depth = M.shape
    check_condition(depth == num_heads * d_head,
                    "depth %d is not heads %d * depth_per_head %d" % (depth, num_heads, d_head))
    return M.reshape(length, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """(heads, length, depth_per_head) -> (length, depth)"""
    heads, length, depth_per_head = H.shape
    return H.transpose(1, 0, 2).reshape(length, heads * depth_per_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dot_attention: queries are expected to be scaled by the caller."""
    logits = np.matmul(Q, np.swapaxes(K, -1, -2))
    probs = softmax(logits, axis=-1)
    contexts = np.matmul(probs, V)
    return contexts, probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    depth_att = X.shape[-1]
    check_condition(depth_att % num_heads == 0,
                    "Number of heads (%d) must divide attention depth (%d)" % (num_heads, depth_att))
    depth_per_head = depth_att // num_heads
    queries = X @ Wq
    keys = X @ Wk
    values = X @ Wv
    queries = queries * depth_per_head ** -0.5
    queries = split_heads(queries, num_heads, depth_per_head)
    keys = split_heads(keys, num_heads, depth_per_head)
    values = split_heads(values, num_heads, depth_per_head)
    contexts, probs = attention(queries, keys, values)
    contexts = merge_heads(contexts)
    return contexts @ Wo, probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = weights.shape[0]
    pairs = []
    for i in range(heads):
        for j in range(i + 1, heads):
            if np.any(np.abs(weights[i] - weights[j]) > atol):
                pairs.append((i, j))
    return pairs


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    # check every setting first, as sockeye's arguments checks do, then build
    for heads in head_counts:
        check_condition(d_model % heads == 0,
                        "Number of heads (%d) must divide model size (%d)" % (heads, d_model))
    num_params = {}
    for heads in head_counts:
        ff_in = d_model * 3 * d_model + (3 * d_model if bias else 0)
        ff_out = d_model * d_model + (d_model if bias else 0)
        num_params[heads] = ff_in + ff_out
    return num_params
