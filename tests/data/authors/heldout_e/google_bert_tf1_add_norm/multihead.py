# Modelled on google-research/bert, modeling.py (get_shape_list / assert_rank with
# expected_rank; attention_layer: transpose_for_scores reshaping to [batch_size, seq_length,
# num_attention_heads, width] and transposing [0, 2, 1, 3], tf.matmul(query_layer, key_layer,
# transpose_b=True) multiplied by 1.0 / math.sqrt(float(size_per_head)), tf.nn.softmax;
# transformer_model: the "attention" scope with its "output" dense layer, dropout and
# layer_norm(attention_output + layer_input), and the hidden_size % num_attention_heads
# ValueError): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def assert_rank(tensor, expected_rank, name=None):
    """Raises an exception if the tensor rank is not of the expected rank."""
    if name is None:
        name = "tensor"
    if isinstance(expected_rank, int):
        expected_rank = [expected_rank]
    actual_rank = tensor.ndim
    if actual_rank not in expected_rank:
        raise ValueError(
            "For the tensor `%s`, the actual rank `%d` (shape = %s) is not equal to the expected "
            "rank `%s`" % (name, actual_rank, str(tensor.shape), str(expected_rank)))


def get_shape_list(tensor, expected_rank=None, name=None):
    """Returns a list of the shape of tensor."""
    if expected_rank is not None:
        assert_rank(tensor, expected_rank, name)
    return list(tensor.shape)


def layer_norm(input_tensor, epsilon=1e-12):
    """Run layer normalization on the last dimension of the tensor."""
    mean = np.mean(input_tensor, axis=-1, keepdims=True)
    variance = np.var(input_tensor, axis=-1, keepdims=True)
    return (input_tensor - mean) / np.sqrt(variance + epsilon)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # transpose_for_scores(input_tensor, num_attention_heads, seq_length, width)
    seq_length = get_shape_list(M, expected_rank=2)[0]
    output_tensor = np.reshape(M, [seq_length, num_heads, d_head])
    return np.transpose(output_tensor, [1, 0, 2])


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_attention_heads, from_seq_length, size_per_head = get_shape_list(H, expected_rank=3)
    context_layer = np.transpose(H, [1, 0, 2])
    return np.reshape(context_layer, [from_seq_length, num_attention_heads * size_per_head])


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # `query_layer` = [B, N, F, H], or [N, F, H] for one sequence
    from_shape = get_shape_list(Q, expected_rank=[3, 4], name="query_layer")
    get_shape_list(K, expected_rank=[3, 4], name="key_layer")
    size_per_head = from_shape[-1]

    # `attention_scores` = [B, N, F, T]
    attention_scores = np.matmul(Q, np.swapaxes(K, -1, -2))
    attention_scores = np.multiply(attention_scores, 1.0 / math.sqrt(float(size_per_head)))

    # Normalize the attention scores to probabilities.
    attention_probs = softmax(attention_scores)

    # `context_layer` = [B, N, F, H]
    context_layer = np.matmul(attention_probs, V)
    return context_layer, attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    layer_input = X
    seq_length, hidden_size = get_shape_list(X, expected_rank=2)
    if hidden_size % num_heads != 0:
        raise ValueError(
            "The hidden size (%d) is not a multiple of the number of attention "
            "heads (%d)" % (hidden_size, num_heads))
    attention_head_size = int(hidden_size / num_heads)

    # attention/self
    query_layer = split_heads(layer_input @ Wq, num_heads, attention_head_size)
    key_layer = split_heads(layer_input @ Wk, num_heads, attention_head_size)
    value_layer = split_heads(layer_input @ Wv, num_heads, attention_head_size)
    context_layer, attention_probs = attention(query_layer, key_layer, value_layer)
    attention_output = merge_heads(context_layer)

    # attention/output
    attention_output = attention_output @ Wo
    attention_output = layer_norm(attention_output + layer_input)
    return attention_output, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_attention_heads = get_shape_list(weights, expected_rank=3)[0]
    pairs = []
    for i in range(num_attention_heads):
        for j in range(i + 1, num_attention_heads):
            if np.max(np.abs(weights[i] - weights[j])) > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for num_attention_heads in head_counts:
        if d_model % num_attention_heads != 0:
            raise ValueError(
                "The hidden size (%d) is not a multiple of the number of attention "
                "heads (%d)" % (d_model, num_attention_heads))
        # query, key, value, attention/output/dense: kernel [H, H] (+ bias [H]) each
        per_layer = d_model * d_model + (d_model if bias else 0)
        counts[num_attention_heads] = 4 * per_layer
    return counts
