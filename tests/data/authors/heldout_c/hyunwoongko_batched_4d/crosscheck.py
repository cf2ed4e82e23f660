# Modelled on hyunwoongko/transformer (the same student): written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projection weights")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module built with bias")
    d_model = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().to(torch.float64).numpy()
    w_q = in_proj[:d_model].T.copy()
    w_k = in_proj[d_model : 2 * d_model].T.copy()
    w_v = in_proj[2 * d_model :].T.copy()
    w_concat = mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()
    return w_q, w_k, w_v, w_concat


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    src = torch.as_tensor(np.asarray(X), dtype=dtype)
    src = src.unsqueeze(0) if mha.batch_first else src.unsqueeze(1)
    with torch.no_grad():
        out, attention = mha(src, src, src, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    attention = attention[0].to(torch.float64).numpy()
    my_out, my_attention = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(my_out - out)))
    w_diff = float(np.max(np.abs(my_attention - attention)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(my_out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
