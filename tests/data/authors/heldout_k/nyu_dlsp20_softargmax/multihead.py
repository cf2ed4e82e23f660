# Modelled on Atcold/NYU-DLSP20 (Alfredo Canziani's NYU Deep Learning), 15-transformer.ipynb
# (MultiHeadAttention: `nn_Softargmax = nn.Softmax  # fix wrong name`, `assert d_model %
# self.num_heads == 0`, W_q / W_k / W_v as nn.Linear(..., bias=False) and W_h = nn.Linear(d_model,
# d_model), `Q = Q / np.sqrt(self.d_k)` then `torch.matmul(Q, K.transpose(2,3))` on
# (bs, n_heads, q_length, dim_per_head), `split_heads(x, batch_size)` with
# `x.view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)`, `group_heads`, the
# "sanity checks" with test_Q / test_K / test_V): written in that style for this test corpus, not
# copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softargmax(x, axis=-1, beta=1.0):
    """soft(arg)max: exp(beta x) normalised along `axis` (what PyTorch calls Softmax)."""
    z = beta * np.asarray(x)
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return softargmax(x, axis=axis)  # fix wrong name


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    """
    Split the last dimension into (heads X depth)
    Return after transpose to put in shape (num_heads X seq_length X d_k)
    """
    return M.reshape(-1, num_heads, d_head).transpose(1, 0, 2)


def merge_heads(H: np.ndarray) -> np.ndarray:
    """
    Combine the heads again to get (seq_length X num_heads * d_k)
    """
    num_heads, _, d_k = H.shape
    return H.transpose(1, 0, 2).reshape(-1, num_heads * d_k)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]

    # Scaling by d_k so that the soft(arg)max doesnt saturate
    Q = Q / np.sqrt(d_k)                             # (bs, n_heads, q_length, dim_per_head)
    scores = np.matmul(Q, np.swapaxes(K, 2, 3))      # (bs, n_heads, q_length, k_length)

    A = softargmax(scores, axis=-1)                  # (bs, n_heads, q_length, k_length)

    # Get the weighted average of the values
    H = np.matmul(A, V)                              # (bs, n_heads, q_length, dim_per_head)

    return H, A


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    seq_length, d_model = X.shape

    # Make sure that the embedding dimension of model is a multiple of number of heads
    assert d_model % num_heads == 0

    d_k = d_model // num_heads

    # After transforming, split into num_heads (a batch of one, as in the notebook)
    Q = split_heads(X @ Wq, num_heads, d_k)[None]  # (1, n_heads, q_length, dim_per_head)
    K = split_heads(X @ Wk, num_heads, d_k)[None]  # (1, n_heads, k_length, dim_per_head)
    V = split_heads(X @ Wv, num_heads, d_k)[None]  # (1, n_heads, k_length, dim_per_head)

    # Calculate the attention weights for each of the heads
    H_cat, A = attention(Q, K, V)

    # Put all the heads back together by concat
    H_cat = merge_heads(H_cat[0])  # (q_length, dim)

    # Final linear layer
    H = H_cat @ Wo  # (q_length, dim)

    return H, A[0]


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    num_heads = len(weights)
    pairs = []
    for i in range(num_heads):
        for j in range(i + 1, num_heads):
            if (np.abs(weights[i] - weights[j]) > atol).any():
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    from torch import nn

    class MultiHeadAttention(nn.Module):
        def __init__(self, d_model, num_heads):
            super().__init__()
            self.num_heads = num_heads
            self.d_model = d_model
            # Make sure that the embedding dimension of model is a multiple of number of heads
            assert d_model % self.num_heads == 0
            self.d_k = d_model // self.num_heads
            # These are still of dimension d_model. They will be split into number of heads
            self.W_q = nn.Linear(d_model, d_model, bias=False)
            self.W_k = nn.Linear(d_model, d_model, bias=False)
            self.W_v = nn.Linear(d_model, d_model, bias=False)
            # Outputs of all sub-layers need to be of dimension d_model
            self.W_h = nn.Linear(d_model, d_model)

    return {
        h: sum(p.numel() for p in MultiHeadAttention(d_model, h).parameters())
        for h in head_counts
    }
