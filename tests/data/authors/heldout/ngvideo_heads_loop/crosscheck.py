# Modelled on karpathy's lecture code habits (weights copied across with .t(), float64 for
# comparisons): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    n_embd = mha.embed_dim
    sd = mha.in_proj_weight.detach().double()
    # special treatment: torch Linear weights are (out, in), we want x @ W, so transpose
    q_w, k_w, v_w = sd.split(n_embd, dim=0)
    Wo = mha.out_proj.weight.detach().double().t()
    return q_w.t().numpy(), k_w.t().numpy(), v_w.t().numpy(), Wo.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y_ref, att_ref = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y_ref = y_ref[0] if mha.batch_first else y_ref[:, 0]
    y_ref = y_ref.double().numpy()
    att_ref = att_ref[0].double().numpy()
    y, att = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.abs(y - y_ref).max())
    w_diff = float(np.abs(att - att_ref).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
