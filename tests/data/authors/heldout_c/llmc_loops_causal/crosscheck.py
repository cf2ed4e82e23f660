# Modelled on karpathy/llm.c's train_gpt2.py checks against the PyTorch reference (the same
# student): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("expected a packed qkv weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("expected bias=False")
    C = mha.embed_dim
    qkvw = mha.in_proj_weight.detach().cpu().double().numpy()  # (3C, C)
    attprojw = mha.out_proj.weight.detach().cpu().double().numpy()  # (C, C)
    return qkvw[:C].T.copy(), qkvw[C : 2 * C].T.copy(), qkvw[2 * C :].T.copy(), attprojw.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x[None, :, :] if mha.batch_first else x[:, None, :]
    with torch.no_grad():
        y, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    att = att[0].double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    maxdiff_out = float(np.abs(out - y).max())
    maxdiff_att = float(np.abs(w - att).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    ok = maxdiff_out <= tol * max(1.0, float(np.abs(out).max())) and maxdiff_att <= tol
    return {"output_max_abs_diff": maxdiff_out, "weights_max_abs_diff": maxdiff_att, "match": bool(ok)}
