# Modelled on the Medium-style "from scratch in NumPy" posts (the same student), which compare with
# torch after torch.from_numpy(x).float(): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v weights")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    W = mha.in_proj_weight.detach().numpy().astype(np.float64)
    W_q, W_k, W_v = np.split(W, 3, axis=0)
    W_o = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return W_q.T, W_k.T, W_v.T, W_o.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.from_numpy(X).float()
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out_torch, w_torch = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_torch = out_torch.squeeze(0 if mha.batch_first else 1).numpy().astype(np.float64)
    w_torch = w_torch[0].numpy().astype(np.float64)

    out_np, w_np = multi_head_attention(X.astype(np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(out_np - out_torch)))
    w_diff = float(np.max(np.abs(w_np - w_torch)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    match = out_diff < tol * max(1.0, float(np.max(np.abs(out_torch)))) and w_diff < tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
