# Modelled on huggingface/transformers, models/mistral/modeling_mistral.py (the same student):
# q_proj, k_proj, v_proj and o_proj as (out, in) nn.Linear weights: written in that style for
# this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("need kdim == vdim == embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("need bias=False and add_bias_kv=False")
    q_proj, k_proj, v_proj = mha.in_proj_weight.detach().double().split(mha.embed_dim, dim=0)
    o_proj = mha.out_proj.weight.detach().double()
    return tuple(w.T.contiguous().numpy() for w in (q_proj, k_proj, v_proj, o_proj))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        o, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    o = o.squeeze(0) if mha.batch_first else o.squeeze(1)
    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    od = float(np.max(np.abs(out - o.double().numpy())))
    wd = float(np.max(np.abs(weights - w[0].double().numpy())))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": od, "weights_max_abs_diff": wd,
            "match": bool(od <= tol and wd <= tol)}
