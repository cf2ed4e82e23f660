# Modelled on allenai/OLMo's checkpoint conversion to Hugging Face (the fused att_proj weight cut
# with `torch.split(..., fused_dims, dim=0)` into q/k/v, asserts on what the config must be) and
# its model tests comparing against HF with a dtype-dependent tolerance: written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    assert mha.in_proj_bias is None, "include_bias must be False"
    assert mha.out_proj.bias is None, "include_bias must be False"

    d_model = mha.embed_dim
    fused_dims = [d_model, d_model, d_model]
    att_proj_weight = mha.in_proj_weight.detach().double()
    q_proj_weight, k_proj_weight, v_proj_weight = torch.split(att_proj_weight, fused_dims, dim=0)
    attn_out_weight = mha.out_proj.weight.detach().double()
    # nn.Linear computes x @ W.T
    return (
        q_proj_weight.T.numpy().copy(),
        k_proj_weight.T.numpy().copy(),
        v_proj_weight.T.numpy().copy(),
        attn_out_weight.T.numpy().copy(),
    )


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.array(X, dtype=np.float64)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = y.squeeze(0) if mha.batch_first else y.squeeze(1)
    y = y.double().numpy()
    att = att[0].double().numpy()

    out, weights = multi_head_attention(
        np.array(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.abs(out - y).max())
    att_diff = float(np.abs(weights - att).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": att_diff,
        "match": bool(out_diff <= atol * max(1.0, float(np.abs(y).max())) and att_diff <= atol),
    }
