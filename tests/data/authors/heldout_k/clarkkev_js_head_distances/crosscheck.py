# Modelled on clarkkev/attention-analysis, extract_attention.py (AttnMapExtractor: run the model,
# take its attention maps out as NumPy arrays of whatever dtype the checkpoint holds, the
# `e_attn[:, :, :seq_len, :seq_len]` slicing): written in that style for this test corpus, not
# copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
  if mha.in_proj_weight is None:
    raise ValueError("kdim/vdim differ from embed_dim: no in_proj_weight to read")
  if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
    raise ValueError("Expected a model without biases")
  if mha.bias_k is not None or mha.bias_v is not None:
    raise ValueError("Expected a model without bias_k / bias_v")
  hidden_size = mha.embed_dim
  in_proj = mha.in_proj_weight.detach().cpu().numpy()
  wq = in_proj[:hidden_size].T.copy()
  wk = in_proj[hidden_size:2 * hidden_size].T.copy()
  wv = in_proj[2 * hidden_size:].T.copy()
  wo = mha.out_proj.weight.detach().cpu().numpy().T.copy()
  return wq, wk, wv, wo


def cross_check(mha, X):
  dtype = mha.in_proj_weight.dtype
  x = torch.as_tensor(np.asarray(X), dtype=dtype)
  x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
  with torch.no_grad():
    torch_out, torch_attns = mha(x, x, x, need_weights=True,
                                 average_attn_weights=False)
  seq_len = x.shape[1] if mha.batch_first else x.shape[0]
  torch_out = (torch_out[0] if mha.batch_first else torch_out[:, 0])
  torch_out = torch_out.double().cpu().numpy()
  torch_attns = torch_attns[0, :, :seq_len, :seq_len].double().cpu().numpy()

  out, attns = multi_head_attention(
      np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
  out_diff = float(np.max(np.abs(out - torch_out)))
  attn_diff = float(np.max(np.abs(attns - torch_attns)))
  tol = 1e-4 if dtype == torch.float32 else 1e-8
  scale = max(1.0, float(np.max(np.abs(torch_out))))
  return {"output_max_abs_diff": out_diff,
          "weights_max_abs_diff": attn_diff,
          "match": bool(out_diff <= tol * scale and attn_diff <= tol)}
