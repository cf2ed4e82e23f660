# Modelled on karpathy/minGPT (the habit of feeding a single (B=1, T, C) batch to a module):
# written in that style for this test corpus, not copied. The adapter always adds the batch axis
# in front, whatever batch_first says.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim differ from embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    C = mha.embed_dim
    Wq, Wk, Wv = w[:C].T, w[C : 2 * C].T, w[2 * C :].T
    Wo = mha.out_proj.weight.detach().to(torch.float64).numpy().T
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype).unsqueeze(0)  # (B=1, T, C)
    with torch.no_grad():
        y_t, att_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y, att = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    y_t = y_t[0].double().numpy()
    att_t = att_t[0].double().numpy()
    d_out = float(np.max(np.abs(y - y_t)))
    d_att = float(np.max(np.abs(att - att_t)))
    tol = 1e-5 if mha.in_proj_weight.dtype == torch.float32 else 1e-10
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_att,
            "match": bool(d_out < tol and d_att < tol)}
