# Modelled on abisee/pointer-generator, attention_decoder.py (See et al., "Get To The Point":
# `e = math_ops.reduce_sum(v * math_ops.tanh(encoder_features + decoder_features), [2, 3])`,
# `masked_attention(e)` = softmax, apply enc_padding_mask, re-normalize, the context vector as
# `reduce_sum(attn_dist * encoder_states)`, `linear()` raising ValueError with the shapes, the
# shape comments and two-space indents): written in that style for this test corpus, not copied.
# The queries play the decoder state s_t, the keys the encoder states h_i; W_h, W_s and v have no
# counterpart in this exercise, so W_h = W_s = identity and v = ones.
"""Multi-head attention in NumPy: the exercises of Module 08."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
  x = np.asarray(x)
  e = np.exp(x - np.max(x, axis=axis, keepdims=True))
  return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(M: np.ndarray, num_heads: int, d_head: int) -> np.ndarray:
  shape = list(M.shape)
  if len(shape) != 2:
    raise ValueError("split_heads is expecting 2D arguments: %s" % str(shape))
  if shape[1] != num_heads * d_head:
    raise ValueError("split_heads expects shape[1] == %d * %d: %s" % (num_heads, d_head, str(shape)))
  M = np.reshape(M, [shape[0], num_heads, d_head]) # shape (n, num_heads, d_head)
  return np.transpose(M, [1, 0, 2]) # shape (num_heads, n, d_head)


def merge_heads(H: np.ndarray) -> np.ndarray:
  num_heads, n, d_head = H.shape
  H = np.transpose(H, [1, 0, 2]) # shape (n, num_heads, d_head)
  return np.reshape(H, [n, num_heads * d_head])


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  # To calculate attention, we calculate
  #   v^T tanh(W_h h_i + W_s s_t + b_attn)
  # where h_i is an encoder state (a key), and s_t a decoder state (a query).
  attention_vec_size = K.shape[-1]
  v = np.ones([attention_vec_size]) # no learned v here
  encoder_features = np.expand_dims(K, -3) # shape (..., 1, attn_length, attention_vec_size)
  decoder_features = np.expand_dims(Q, -2) # shape (..., n, 1, attention_vec_size)
  enc_padding_mask = np.ones(K.shape[:-1]) # no padding: shape (..., attn_length)
  enc_padding_mask = np.expand_dims(enc_padding_mask, -2) # shape (..., 1, attn_length)

  def masked_attention(e):
    """Take softmax of e then apply enc_padding_mask and re-normalize"""
    attn_dist = softmax(e, axis=-1) # take softmax. shape (..., n, attn_length)
    attn_dist *= enc_padding_mask # apply mask
    masked_sums = np.sum(attn_dist, axis=-1, keepdims=True) # shape (..., n, 1)
    return attn_dist / masked_sums # re-normalize

  # Calculate v^T tanh(W_h h_i + W_s s_t + b_attn)
  e = np.sum(v * np.tanh(encoder_features + decoder_features), axis=-1) # calculate e. shape (..., n, attn_length)

  # Calculate attention distribution
  attn_dist = masked_attention(e)

  # Calculate the context vector from attn_dist and encoder_states (the values here)
  context_vector = np.matmul(attn_dist, V) # shape (..., n, d_v)
  return context_vector, attn_dist


def multi_head_attention(
    X: np.ndarray,
    Wq: np.ndarray,
    Wk: np.ndarray,
    Wv: np.ndarray,
    Wo: np.ndarray,
    num_heads: int,
) -> tuple[np.ndarray, np.ndarray]:
  n, d_model = X.shape
  if num_heads <= 0 or d_model % num_heads != 0:
    raise ValueError("d_model %d is not divisible by num_heads %d" % (d_model, num_heads))
  d_head = d_model // num_heads
  q = split_heads(np.matmul(X, Wq), num_heads, d_head) # shape (num_heads, n, d_head)
  k = split_heads(np.matmul(X, Wk), num_heads, d_head)
  v = split_heads(np.matmul(X, Wv), num_heads, d_head)
  context, attn_dists = attention(q, k, v) # shapes (num_heads, n, d_head), (num_heads, n, n)
  output = np.matmul(merge_heads(context), Wo) # shape (n, d_model)
  return output, attn_dists


def distinct_head_pairs(weights: np.ndarray, atol: float = 1e-6) -> list[tuple[int, int]]:
  num_heads = weights.shape[0]
  pairs = []
  for i in range(num_heads):
    for j in range(i + 1, num_heads):
      if np.max(np.abs(weights[i] - weights[j])) > atol:
        pairs.append((i, j))
  return pairs


def parameter_counts(
    d_model: int, head_counts: Iterable[int], bias: bool = False
) -> dict[int, int]:
  import torch

  counts = {}
  for h in head_counts:
    if h <= 0 or d_model % h != 0:
      raise ValueError("head count %d does not divide d_model %d" % (h, d_model))
    mha = torch.nn.MultiheadAttention(d_model, h, bias=bias)
    counts[h] = int(sum(np.prod(p.shape) for p in mha.parameters()))
  return counts
