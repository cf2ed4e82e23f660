# Modelled on The AI Summer's self-attention-cv (the same student): written in that style for this
# test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    dim = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    wq, wk, wv = w[:dim].T, w[dim : 2 * dim].T, w[2 * dim :].T
    w0 = mha.out_proj.weight.detach().to(torch.float64).numpy().T
    return wq, wk, wv, w0


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).to(torch.float64).numpy()
    attn = attn[0].to(torch.float64).numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(out - y).max())
    w_diff = float(np.abs(w - attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": w_diff,
        "match": bool(out_diff <= tol * max(1.0, float(np.abs(out).max())) and w_diff <= tol),
    }
