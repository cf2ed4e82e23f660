# Modelled on Diego999/pyGAT (layers.py GraphAttentionLayer: `h = torch.mm(input, self.W)`,
# `e = self.leakyrelu(...)` with alpha = 0.2, `zero_vec = -9e15*torch.ones_like(e)`,
# `attention = torch.where(adj > 0, e, zero_vec)`, `F.softmax(attention, dim=1)`,
# `h_prime = torch.matmul(attention, h)`, `return F.elu(h_prime)` when concat=True; models.py GAT:
# `torch.cat([att(x, adj) for att in self.attentions], dim=1)`; utils.py `accuracy`): written in
# that style for this test corpus, not copied. The graph is complete (adj = ones) and the GAT
# scoring vector `a` is replaced by the exercise's query-key dot product.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def leakyrelu(x, alpha):
    return np.where(x > 0, x, alpha * x)


def elu(x):
    return np.where(x > 0, x, np.expm1(x))


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
    N = M.shape[0]
    if M.shape[1] != num_heads * d_head:
        raise ValueError("expected %d features (%d heads x %d), got %d" % (num_heads * d_head, num_heads, d_head, M.shape[1]))
    return np.stack([M[:, i * d_head:(i + 1) * d_head] for i in range(num_heads)], axis=0)


def merge_heads(H: np.ndarray) -> np.ndarray:
    # torch.cat([att(x, adj) for att in self.attentions], dim=1)
    return np.concatenate([H[i] for i in range(H.shape[0])], axis=1)


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d_k = Q.shape[-1]
    e = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(d_k)
    attention = softmax(e, axis=-1)
    h_prime = np.matmul(attention, V)
    return h_prime, attention


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
    N, nfeat = X.shape
    if num_heads <= 0 or nfeat % num_heads != 0:
        raise ValueError("d_model %d is not divisible by num_heads %d" % (nfeat, num_heads))
    nhid = nfeat // num_heads
    alpha = 0.2  # alpha for the leaky_relu
    adj = np.ones((N, N))  # every token sees every token

    outputs = []
    attentions = []
    for i in range(num_heads):
        # one GraphAttentionLayer per head, its W is this head's block of columns
        cols = slice(i * nhid, (i + 1) * nhid)
        q = np.dot(X, Wq[:, cols])
        k = np.dot(X, Wk[:, cols])
        h = np.dot(X, Wv[:, cols])

        e = leakyrelu(np.dot(q, k.T) / np.sqrt(nhid), alpha)
        zero_vec = -9e15 * np.ones_like(e)
        attention = np.where(adj > 0, e, zero_vec)
        attention = softmax(attention, axis=1)
        h_prime = np.dot(attention, h)

        outputs.append(elu(h_prime))  # concat=True
        attentions.append(attention)

    x = np.concatenate(outputs, axis=1)
    return np.dot(x, Wo), np.stack(attentions, axis=0)


def accuracy(output, labels):
    preds = output.argmax(1)
    correct = (preds == labels).astype(np.float64)
    return correct.sum() / len(labels)


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
    nheads = weights.shape[0]
    pairs = []
    for i in range(nheads):
        for j in range(i + 1, nheads):
            # two heads attend the same way when every token picks the same neighbour
            if accuracy(weights[i], weights[j].argmax(1)) < 1.0:
                pairs.append((i, j))
    return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
    import torch.nn as nn

    counts = {}
    for nheads in head_counts:
        if nheads <= 0 or d_model % nheads != 0:
            raise ValueError("nb_heads %d does not divide d_model %d" % (nheads, d_model))
        model = nn.MultiheadAttention(d_model, nheads, bias=bias)
        counts[nheads] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return counts
