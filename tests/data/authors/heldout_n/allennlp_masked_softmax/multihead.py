# Modelled on allenai/allennlp: allennlp/modules/seq2seq_encoders/multi_head_self_attention.py
# (MultiHeadSelfAttention: `_combined_projection` split into queries, keys, values,
# `.view(batch_size, timesteps, num_heads, ...).transpose(1, 2)`, `torch.bmm(queries_per_head /
# self._scale, keys_per_head.transpose(1, 2))` with `self._scale = (input_dim // num_heads) ** 0.5`,
# `masked_softmax(..., memory_efficient=True)`, `weighted_sum`), allennlp/nn/util.py
# (`masked_softmax`, `get_text_field_mask`, `min_value_of_dtype`) and allennlp/common/checks.py
# (`ConfigurationError`): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class ConfigurationError(Exception):
    """The exception raised by any AllenNLP object when it's misconfigured."""

    def __init__(self, message: str):
        super().__init__()
        self.message = message

    def __str__(self):
        return self.message


def min_value_of_dtype(dtype):
    return np.finfo(dtype).min


def masked_softmax(vector, mask=None, dim=-1, memory_efficient=False):
    if mask is None:
        exps = np.exp(vector - vector.max(axis=dim, keepdims=True))
        return exps / exps.sum(axis=dim, keepdims=True)
    mask = mask.astype(bool)
    while mask.ndim < vector.ndim:
        mask = mask[..., None, :]
    if not memory_efficient:
        result = masked_softmax(vector * mask, None, dim)
        result = result * mask
        return result / (result.sum(axis=dim, keepdims=True) + 1e-13)
    masked_vector = np.where(mask, vector, min_value_of_dtype(vector.dtype))
    return masked_softmax(masked_vector, None, dim)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return masked_softmax(x, None, dim=axis)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    timesteps, attention_dim = M.shape
    if attention_dim != num_heads * d_head:
        raise ConfigurationError(
            f"Attention dim {attention_dim} is not num_heads {num_heads} x {d_head}."
        )
    return M.reshape(timesteps, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, timesteps, head_dim = H.shape
    return H.transpose(1, 0, 2).reshape(timesteps, num_heads * head_dim)


def weighted_sum(matrix, attention):
    return np.matmul(attention, matrix)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scale = Q.shape[-1] ** 0.5
    scaled_similarities = np.matmul(Q / scale, np.swapaxes(K, -1, -2))
    weights = masked_softmax(scaled_similarities, None)
    return weighted_sum(V, weights), weights


def get_text_field_mask(X):
    # a token is padding when all its features are 0
    return (X != 0).any(axis=-1)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    input_dim = X.shape[-1]
    if input_dim % num_heads != 0:
        raise ConfigurationError(
            f"Key size ({input_dim}) must be divisible by the number of attention heads ({num_heads})."
        )
    attention_dim = Wq.shape[1]
    head_dim = attention_dim // num_heads
    scale = (input_dim // num_heads) ** 0.5
    mask = get_text_field_mask(X)

    combined_projection = X @ np.concatenate([Wq, Wk, Wv], axis=1)
    queries, keys, values = np.split(combined_projection, 3, axis=-1)
    queries_per_head = split_heads(queries, num_heads, head_dim)
    keys_per_head = split_heads(keys, num_heads, head_dim)
    values_per_head = split_heads(values, num_heads, head_dim)

    scaled_similarities = np.matmul(queries_per_head / scale, keys_per_head.transpose(0, 2, 1))
    attention_weights = masked_softmax(scaled_similarities, mask, memory_efficient=True)
    outputs = weighted_sum(values_per_head, attention_weights)
    outputs = merge_heads(outputs)
    return outputs @ Wo, attention_weights


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = weights.shape[0]
    flat = weights.reshape(num_heads, -1)
    differs = np.abs(flat[:, None, :] - flat[None, :, :]).max(axis=-1) > atol
    return [(i, j) for i in range(num_heads) for j in range(i + 1, num_heads) if differs[i, j]]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    import torch

    counts = {}
    for num_heads in head_counts:
        try:
            module = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
        except AssertionError as error:
            raise ValueError(f"num_heads {num_heads} does not divide d_model {d_model}") from error
        counts[num_heads] = sum(p.numel() for p in module.parameters())
    return counts
