# Modelled on graykode/nlp-tutorial, 5-1.Transformer/Transformer-Torch.py (module-level
# hyperparameters d_k = d_v = 64 and n_heads = 8; ScaledDotProductAttention dividing by
# np.sqrt(d_k), the global; MultiHeadAttention with view(batch_size, -1, n_heads, d_k).transpose(1, 2),
# W_Q = nn.Linear(d_model, d_k * n_heads) and nn.LayerNorm(d_model)(output + residual)):
# written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# Transformer Parameters
d_k = d_v = 64  # dimension of K(=Q), V
n_heads = 8  # number of heads in Multi-Head Attention


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    # (S, D) -split-> (S, H, W) -trans-> (H, S, W)
    return M.reshape(-1, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    num_heads, _, d_head = H.shape
    # context: [len_q x n_heads * d_v]
    return H.transpose(1, 0, 2).reshape(-1, num_heads * d_head)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # scores : [n_heads x len_q(=len_k) x len_k(=len_q)]
    scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    attn = softmax(scores, axis=-1)
    context = np.matmul(attn, V)
    return context, attn


def layer_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    # nn.LayerNorm(d_model) freshly built: weight 1, bias 0
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    residual, d_model = X, X.shape[-1]
    d_head = d_model // num_heads
    q_s = split_heads(X @ Wq, num_heads, d_head)  # q_s: [n_heads x len_q x d_k]
    k_s = split_heads(X @ Wk, num_heads, d_head)  # k_s: [n_heads x len_k x d_k]
    v_s = split_heads(X @ Wv, num_heads, d_head)  # v_s: [n_heads x len_k x d_v]
    context, attn = attention(q_s, k_s, v_s)
    context = merge_heads(context)  # context: [len_q x n_heads * d_v]
    output = context @ Wo
    return layer_norm(output + residual), attn  # output: [len_q x d_model]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    pairs = []
    for i in range(len(weights)):
        for j in range(i + 1, len(weights)):
            if np.abs(weights[i] - weights[j]).max() > atol:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    counts = {}
    for heads in head_counts:
        # W_Q, W_K: nn.Linear(d_model, d_k * n_heads); W_V: nn.Linear(d_model, d_v * n_heads)
        n = 2 * d_model * d_k * heads + d_model * d_v * heads
        # output: nn.Linear(n_heads * d_v, d_model)
        n += heads * d_v * d_model
        if bias:
            n += 2 * d_k * heads + d_v * heads + d_model
        counts[heads] = n
    return counts
