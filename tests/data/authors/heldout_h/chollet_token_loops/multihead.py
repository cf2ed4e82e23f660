# Modelled on François Chollet, "Deep Learning with Python", 2nd edition, chapter 11
# (listing "self_attention(input_sequence)" in NumPy pseudo-code: output = np.zeros(shape=
# input_sequence.shape), a loop over pivot vectors and a loop over tokens, scores /=
# np.sqrt(input_sequence.shape[1]), new_pivot_representation = np.zeros(shape=pivot_vector.shape);
# and layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim) in TransformerEncoder):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    exps = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return exps / np.sum(exps, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    heads = []
    for h in range(num_heads):
        heads.append(M[:, h * d_head:(h + 1) * d_head])
    return np.stack(heads)


def merge_heads(H: np.ndarray) -> np.ndarray:
    return np.concatenate([head for head in H], axis=-1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    output = np.zeros(shape=Q.shape)
    weights = np.zeros(shape=(len(Q), len(K)))
    for i, pivot_vector in enumerate(Q):
        scores = np.zeros(shape=(len(K),))
        for j, vector in enumerate(K):
            scores[j] = np.dot(pivot_vector, vector.T)
        scores /= np.sqrt(Q.shape[1])
        scores = softmax(scores)
        weights[i] = scores
        new_pivot_representation = np.zeros(shape=pivot_vector.shape)
        for j, vector in enumerate(V):
            new_pivot_representation += vector * scores[j]
        output[i] = new_pivot_representation
    return output, weights


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    embed_dim = X.shape[1]
    if embed_dim % num_heads != 0:
        raise ValueError(f"embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
    key_dim = embed_dim // num_heads
    queries = split_heads(X @ Wq, num_heads, key_dim)
    keys = split_heads(X @ Wk, num_heads, key_dim)
    values = split_heads(X @ Wv, num_heads, key_dim)
    outputs = []
    weights = []
    for h in range(num_heads):
        output, w = attention(queries[h], keys[h], values[h])
        outputs.append(output)
        weights.append(w)
    return merge_heads(np.stack(outputs)) @ Wo, np.stack(weights)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(weights)):
        for j in range(len(weights)):
            if i < j and np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    # layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim): every head projects
    # the query, key and value to key_dim = embed_dim, and the output maps them all back.
    embed_dim = key_dim = d_model
    counts = {}
    for num_heads in head_counts:
        total = 3 * embed_dim * num_heads * key_dim  # query, key, value kernels
        total += num_heads * key_dim * embed_dim  # output kernel
        if bias:
            total += 3 * num_heads * key_dim + embed_dim
        counts[num_heads] = total
    return counts
