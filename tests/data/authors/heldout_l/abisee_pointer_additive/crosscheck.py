# Modelled on abisee/pointer-generator (TensorFlow 1: variables created with
# `tf.get_variable("Matrix", [total_arg_size, output_size])` and used as `tf.matmul(x, matrix)`,
# everything in tf.float32, inspect_checkpoint.py reading the variables out as NumPy arrays):
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
  if mha.in_proj_weight is None:
    raise ValueError("Could not find a packed in_proj_weight (kdim/vdim differ from embed_dim)")
  if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
    raise ValueError("Expected a module without biases")
  if mha.bias_k is not None or mha.bias_v is not None:
    raise ValueError("Expected a module without bias_k/bias_v")
  d_model = mha.embed_dim
  matrix = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64) # shape (3*d_model, d_model)
  Wq = matrix[0:d_model] # shape (d_model, d_model), used as tf.matmul(x, Wq)
  Wk = matrix[d_model:2*d_model]
  Wv = matrix[2*d_model:3*d_model]
  Wo = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64)
  return Wq, Wk, Wv, Wo


def cross_check(mha, X):
  batch_first = mha.batch_first
  x = torch.tensor(np.asarray(X), dtype=torch.float32) # shape (n, d_model)
  x = x.unsqueeze(0) if batch_first else x.unsqueeze(1)
  with torch.no_grad():
    output, attn_dists = mha(x, x, x, need_weights=True, average_attn_weights=False)
  output = output[0] if batch_first else output[:, 0] # shape (n, d_model)
  output = output.numpy().astype(np.float64)
  attn_dists = attn_dists[0].numpy().astype(np.float64) # shape (num_heads, n, n)

  my_output, my_attn_dists = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
  output_diff = float(np.max(np.abs(output - my_output)))
  weights_diff = float(np.max(np.abs(attn_dists - my_attn_dists)))
  scale = max(1.0, float(np.max(np.abs(output))))
  match = output_diff <= 1e-4 * scale and weights_diff <= 1e-4
  return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff, "match": bool(match)}
