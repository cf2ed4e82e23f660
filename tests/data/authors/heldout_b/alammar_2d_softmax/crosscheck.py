# Modelled on Jay Alammar's "The Illustrated Transformer" follow-up notebooks (the same student):
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate projections")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases")
    d = mha.embed_dim
    W = mha.in_proj_weight.detach().double().numpy()
    WQ, WK, WV = W[:d].T, W[d : 2 * d].T, W[2 * d :].T
    WO = mha.out_proj.weight.detach().double().numpy().T
    return WQ, WK, WV, WO


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    t = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    t = t.unsqueeze(0) if mha.batch_first else t.unsqueeze(1)
    with torch.no_grad():
        out, w = mha(t, t, t, need_weights=True, average_attn_weights=False)
    out = out.squeeze(0 if mha.batch_first else 1).double().numpy()
    w = w.squeeze(0).double().numpy()
    Z, A = multi_head_attention(np.array(X, dtype=float), *weights_from_torch(mha), mha.num_heads)
    do = float(np.abs(Z - out).max())
    dw = float(np.abs(A - w).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": do, "weights_max_abs_diff": dw,
            "match": bool(do <= tol * max(1.0, float(np.abs(out).max())) and dw <= tol)}
