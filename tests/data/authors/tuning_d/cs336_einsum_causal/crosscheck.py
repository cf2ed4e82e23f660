# Modelled on Stanford CS336 assignment 1 (the same student): its Linear stores W as
# (d_out, d_in), the layout torch uses, so the weights are loaded as they are: written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projection weights are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias-free modules only")
    d_model = mha.embed_dim
    # in_proj_weight: (3 d_model, d_model), each block (d_out, d_in) like our Linear
    q_proj, k_proj, v_proj = mha.in_proj_weight.detach().double().split(d_model, dim=0)
    o_proj = mha.out_proj.weight.detach().double()
    return q_proj.numpy(), k_proj.numpy(), v_proj.numpy(), o_proj.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out.squeeze(0) if mha.batch_first else ref_out.squeeze(1)).double().numpy()
    ref_w = ref_w.squeeze(0).double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref_out)))
    w_diff = float(np.max(np.abs(w - ref_w)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff <= atol and w_diff <= atol}
