# Modelled on clarkkev/attention-analysis (Clark et al., "What Does BERT Look At?"):
# head_distances.py (the average Jensen-Shannon divergence between heads, each map smoothed as
# `(0.001 / n) + (attn * 0.999)` first, `js.sum(-1).sum(-1)`), General_Analysis.ipynb (attention
# maps as [n_layers, n_heads, n_tokens, n_tokens] NumPy arrays, "smooth to avoid NaNs",
# np.newaxis broadcasting, two-space indents) and extract_attention.py (the maps written out for
# analysis): written in that style for this test corpus, not copied.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x, axis=-1):
  x = np.asarray(x)
  exp_x = np.exp(x - np.max(x, axis=axis, keepdims=True))
  return exp_x / np.sum(exp_x, axis=axis, keepdims=True)


def split_heads(M, num_heads, d_head):
  n_tokens, width = M.shape
  if width != num_heads * d_head:
    raise ValueError("Expected width {:} = {:} heads x {:}, got {:}".format(
        num_heads * d_head, num_heads, d_head, width))
  return np.transpose(M.reshape([n_tokens, num_heads, d_head]), [1, 0, 2])


def merge_heads(H):
  n_heads, n_tokens, d_head = H.shape
  return np.transpose(H, [1, 0, 2]).reshape([n_tokens, n_heads * d_head])


def attention(Q, K, V):
  size_per_head = Q.shape[-1]
  scores = np.matmul(Q, np.swapaxes(K, -1, -2)) / np.sqrt(float(size_per_head))
  attn = softmax(scores, axis=-1)
  return np.matmul(attn, V), attn


def multi_head_attention(X, Wq, Wk, Wv, Wo, num_heads):
  n_tokens, hidden_size = X.shape
  if hidden_size % num_heads != 0:
    raise ValueError(
        "The hidden size ({:}) is not a multiple of the number of attention "
        "heads ({:})".format(hidden_size, num_heads))
  size_per_head = hidden_size // num_heads

  q = split_heads(X @ Wq, num_heads, size_per_head)
  k = split_heads(X @ Wk, num_heads, size_per_head)
  v = split_heads(X @ Wv, num_heads, size_per_head)
  context, attns = attention(q, k, v)
  output = merge_heads(context) @ Wo

  # attention maps for analysis: smooth to avoid NaNs (log of 0) in the entropies / JS
  attns = (0.001 / attns.shape[-1]) + (attns * 0.999)
  return output, attns


def distinct_head_pairs(weights, atol=1e-6):
  """Heads whose Jensen-Shannon divergence from each other is above atol."""
  attns_flat = np.asarray(weights, dtype=np.float64)
  n_heads, n_tokens = attns_flat.shape[0], attns_flat.shape[-1]
  attns_flat = attns_flat.reshape([n_heads, -1, n_tokens])
  js_distances = np.zeros([n_heads, n_heads])
  for head in range(n_heads):
    head_attns = np.expand_dims(attns_flat[head], 0)
    head_attns_smoothed = (0.001 / head_attns.shape[-1]) + (head_attns * 0.999)
    attns_flat_smoothed = (0.001 / attns_flat.shape[-1]) + (attns_flat * 0.999)
    m = (head_attns_smoothed + attns_flat_smoothed) / 2
    js = -head_attns_smoothed * np.log(m / head_attns_smoothed)
    js += -attns_flat_smoothed * np.log(m / attns_flat_smoothed)
    js /= 2
    js = js.sum(-1).sum(-1)
    js_distances[head] += js

  pairs = []
  for i in range(n_heads):
    for j in range(i + 1, n_heads):
      if js_distances[i, j] > atol:
        pairs.append((i, j))
  return pairs


def parameter_counts(d_model, head_counts, bias=False):
  import torch

  counts = {}
  for n_heads in head_counts:
    if n_heads <= 0 or d_model % n_heads != 0:
      raise ValueError(
          "The hidden size ({:}) is not a multiple of the number of attention "
          "heads ({:})".format(d_model, n_heads))
    mha = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias)
    counts[n_heads] = sum(p.numel() for p in mha.parameters())
  return counts
