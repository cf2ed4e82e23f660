# Modelled on huggingface/transformers, src/transformers/models/squeezebert/modeling_squeezebert.py
# (SqueezeBertSelfAttention: data in [N, C, W] layout, query/key/value as
# nn.Conv1d(cin, cin, kernel_size=1, groups=q_groups) with q_groups = k_groups = v_groups = 4 and
# post_attention_groups = 1 as in SqueezeBertConfig, `self.softmax = nn.Softmax(dim=-1)` built
# once, transpose_for_scores / transpose_key_for_scores / transpose_output, MatMulWrapper,
# `attention_score / math.sqrt(self.attention_head_size)`, and the layer returning
# `result["attention_score"]` as its attentions): written in that style for this test corpus, not
# copied.
"""Multi-head attention in NumPy: the exercises of Module 08.

Data dimensions (as in SqueezeBERT):
- C = channels (d_model), W = seq_len ("width" in computer vision CNNs), C1 = head index,
  C2 = one head's contents.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

# SqueezeBertConfig defaults
Q_GROUPS = 4
K_GROUPS = 4
V_GROUPS = 4
POST_ATTENTION_GROUPS = 1


class Softmax:
    """Stand-in for nn.Softmax(dim=...)."""

    def __init__(self, dim=-1):
        self.dim = dim

    def __call__(self, x):
        x = np.asarray(x)
        e = np.exp(x - np.max(x, axis=self.dim, keepdims=True))
        return e / np.sum(e, axis=self.dim, keepdims=True)


_softmax = Softmax(dim=-1)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return _softmax(x)


def matmul(mat1, mat2):
    """MatMulWrapper: mat1 [..., M, K] @ mat2 [..., K, N] -> [..., M, N]."""
    return np.matmul(mat1, mat2)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """
    - input: [W, C] (tokens as rows, as the exercise gives them)
    - output: [C1, W, C2] where C1 is the head index, and C2 is one head's contents
    """
    x = M.T  # [C, W]
    new_x_shape = (num_heads, d_head, x.shape[-1])  # [C1, C2, W]
    x = x.reshape(new_x_shape)
    return x.transpose(0, 2, 1)  # [C1, C2, W] --> [C1, W, C2]


def merge_heads(H: np.ndarray) -> np.ndarray:
    """
    - input: [C1, W, C2]
    - output: [W, C]
    """
    x = H.transpose(0, 2, 1)  # [C1, C2, W]
    new_x_shape = (x.shape[0] * x.shape[1], x.shape[2])  # [C, W]
    x = x.reshape(new_x_shape)
    return x.T


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    attention_head_size = Q.shape[-1]
    key_layer = np.swapaxes(K, -1, -2)  # [..., C2, W], as transpose_key_for_scores leaves it

    # Take the dot product between "query" and "key" to get the raw attention scores.
    attention_score = matmul(Q, key_layer)
    attention_score = attention_score / math.sqrt(attention_head_size)

    # Normalize the attention scores to probabilities.
    attention_probs = _softmax(attention_score)

    context_layer = matmul(attention_probs, V)
    return context_layer, attention_score


def _conv1d_k1(W, x, groups):
    """nn.Conv1d(cin, cout, kernel_size=1, groups=groups, bias=False) on x: [C, W].

    W is given the exercise's way, (in, out), so the conv weight is W.T: (out, in).
    """
    weight = W.T
    cout, cin = weight.shape
    if cin % groups != 0 or cout % groups != 0:
        raise ValueError(f"channels ({cin}) are not a multiple of groups ({groups})")
    gin, gout = cin // groups, cout // groups
    out = np.empty((cout, x.shape[-1]), dtype=np.result_type(weight, x))
    for g in range(groups):
        out[g * gout:(g + 1) * gout] = (
            weight[g * gout:(g + 1) * gout, g * gin:(g + 1) * gin] @ x[g * gin:(g + 1) * gin]
        )
    return out


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    cin = X.shape[-1]
    if cin % num_heads != 0:
        raise ValueError(f"cin ({cin}) is not a multiple of the number of attention heads ({num_heads})")
    attention_head_size = cin // num_heads

    # [batch_size, sequence_length, hidden_size] --> [batch_size, hidden_size, sequence_length]
    hidden_states = X.T

    mixed_query_layer = _conv1d_k1(Wq, hidden_states, Q_GROUPS)
    mixed_key_layer = _conv1d_k1(Wk, hidden_states, K_GROUPS)
    mixed_value_layer = _conv1d_k1(Wv, hidden_states, V_GROUPS)

    query_layer = split_heads(mixed_query_layer.T, num_heads, attention_head_size)
    key_layer = split_heads(mixed_key_layer.T, num_heads, attention_head_size)
    value_layer = split_heads(mixed_value_layer.T, num_heads, attention_head_size)

    context_layer, attention_score = attention(query_layer, key_layer, value_layer)
    context_layer = merge_heads(context_layer).T  # [C, W]

    post_attention_output = _conv1d_k1(Wo, context_layer, POST_ATTENTION_GROUPS)
    return post_attention_output.T, attention_score


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_attention_heads = weights.shape[0]
    result = []
    for a in range(num_attention_heads):
        for b in range(a + 1, num_attention_heads):
            if np.abs(weights[a] - weights[b]).max() > atol:
                result.append((a, b))
    return result


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    """Parameters of the self-attention: q, k, v grouped 1x1 convs + the post-attention conv."""
    counts = {}
    for h in head_counts:
        if h <= 0 or d_model % h != 0:
            raise ValueError(f"cin ({d_model}) is not a multiple of the number of attention heads ({h})")
        total = 0
        for groups in (Q_GROUPS, K_GROUPS, V_GROUPS, POST_ATTENTION_GROUPS):
            total += d_model * (d_model // groups)  # Conv1d weight: (cout, cin / groups, 1)
            if bias:
                total += d_model
        counts[h] = total
    return counts
