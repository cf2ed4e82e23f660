# Modelled on facebookresearch/xformers (the same student): the input projection's weights, as
# xformers' InputProjection keeps them (nn.Linear, (out, in)), applied as x @ W.T: written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("separate key/value dimensions are not supported")
    if any(b is not None for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v)):
        raise ValueError("projections with biases are not supported")
    dim_model = mha.embed_dim
    w = mha.in_proj_weight.detach().cpu().to(torch.float64)
    q_w, k_w, v_w = w[:dim_model], w[dim_model : 2 * dim_model], w[2 * dim_model :]
    o_w = mha.out_proj.weight.detach().cpu().to(torch.float64)
    return tuple(np.ascontiguousarray(t.numpy().T) for t in (q_w, k_w, v_w, o_w))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.inference_mode():
        y_ref, att_ref = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y_ref = (y_ref[0] if mha.batch_first else y_ref[:, 0]).to(torch.float64).numpy()
    att_ref = att_ref[0].to(torch.float64).numpy()
    y, att = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    output_diff = float(np.max(np.abs(y - y_ref)))
    weights_diff = float(np.max(np.abs(att - att_ref)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": output_diff <= tol and weights_diff <= tol,
    }
