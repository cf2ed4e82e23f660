# Modelled on apple/ml-ane-transformers (the same student): the reference code's
# `_register_load_state_dict_pre_hook` that turns nn.Linear weights (out, in) into Conv2d
# weights (out, in, 1, 1); here torch's (out, in) weights turned into x @ W, and the module fed
# in its own layout: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("separate q/k/v projections cannot be read from in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("biases are not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")
    w = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    q_w, k_w, v_w = np.split(w, 3, axis=0)  # each (out, in)
    o_w = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64)
    return q_w.T.copy(), k_w.T.copy(), v_w.T.copy(), o_w.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.ascontiguousarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        ref, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref = ref.squeeze(0) if mha.batch_first else ref.squeeze(1)
    ref = ref.cpu().numpy().astype(np.float64)
    ref_w = ref_w.squeeze(0).cpu().numpy().astype(np.float64)

    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref)))
    w_diff = float(np.max(np.abs(w - ref_w)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff <= tol and w_diff <= tol)}
