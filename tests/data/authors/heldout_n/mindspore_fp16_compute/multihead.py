# Modelled on mindspore-ai/mindspore (mindspore/parallel/nn/transformer.py and
# mindformers' MultiHeadAttention: `compute_dtype=mstype.float16`, `softmax_compute_type=
# mstype.float32`, `self.scale_factor = Tensor(math.sqrt(math.sqrt(self.size_per_head)))`
# dividing both the query and the key, `P.BatchMatMul(transpose_b=True)`, the additive mask
# `(1 - attention_mask) * -10000.0`, `P.Transpose()(x, (0, 2, 1, 3))` and `P.Reshape()`):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

compute_dtype = np.float16  # mstype.float16
softmax_compute_type = np.float32  # mstype.float32
multiply_data = -10000.0


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x.astype(softmax_compute_type)
    x = x - x.max(axis=axis, keepdims=True)
    exp = np.exp(x)
    return exp / exp.sum(axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    seq_length, hidden_size = M.shape
    if hidden_size != num_heads * d_head:
        raise ValueError(
            f"hidden_size {hidden_size} should be num_heads {num_heads} * size_per_head {d_head}"
        )
    x = np.reshape(M, (1, seq_length, num_heads, d_head))
    x = np.transpose(x, (0, 2, 1, 3))
    return x[0]


def merge_heads(H: np.ndarray) -> np.ndarray:
    x = np.transpose(H[None], (0, 2, 1, 3))
    x_shape = x.shape
    return np.reshape(x, (x_shape[1], x_shape[-2] * x_shape[-1]))


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, attention_mask=None):
    size_per_head = Q.shape[-1]
    scale_factor = np.sqrt(np.sqrt(float(size_per_head)))
    query = (Q / scale_factor).astype(compute_dtype)
    key = (K / scale_factor).astype(compute_dtype)
    value = V.astype(compute_dtype)
    score = np.matmul(query, np.swapaxes(key, -1, -2))  # BatchMatMul(transpose_b=True)
    if attention_mask is not None:
        adder = (1.0 - attention_mask.astype(compute_dtype)) * multiply_data
        score = score + adder.astype(compute_dtype)
    attention_probs = softmax(score, axis=-1)
    weighted_values = np.matmul(attention_probs.astype(compute_dtype), value)
    return weighted_values.astype(np.float32), attention_probs


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_length, hidden_size = X.shape
    if hidden_size % num_heads != 0:
        raise ValueError(f"hidden_size {hidden_size} must be a multiple of num_heads {num_heads}")
    size_per_head = hidden_size // num_heads
    attention_mask = np.ones((seq_length, seq_length))
    query = split_heads(X @ Wq, num_heads, size_per_head)
    key = split_heads(X @ Wk, num_heads, size_per_head)
    value = split_heads(X @ Wv, num_heads, size_per_head)
    context, attention_probs = attention(query, key, value, attention_mask)
    output = merge_heads(context) @ Wo
    return output, attention_probs


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    heads = weights.shape[0]
    result = []
    for i in range(heads - 1):
        gaps = np.abs(weights[i + 1:] - weights[i]).reshape(heads - i - 1, -1).max(axis=1)
        result.extend((i, i + 1 + k) for k in np.flatnonzero(gaps > atol))
    return [(int(i), int(j)) for i, j in result]


def parameter_counts(d_model: int, head_counts: Iterable[int], bias: bool = False) -> dict[int, int]:
    import torch

    out = {}
    for h in head_counts:
        if d_model % h != 0:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {h}")
        layer = torch.nn.MultiheadAttention(d_model, h, bias=bias)
        out[h] = sum(p.numel() for p in layer.parameters() if p.requires_grad)
    return out
