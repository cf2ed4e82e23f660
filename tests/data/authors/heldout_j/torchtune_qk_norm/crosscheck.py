# Modelled on pytorch/torchtune's checkpoint conversion (convert_weights: state dicts moved
# to the training dtype with `.to(dtype=torch.float32)` before use) and its tests'
# `assert_expected(actual, expected, rtol=..., atol=...)`: written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim (separate q/k/v projections)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("module has add_bias_kv")
    embed_dim = mha.embed_dim
    state_dict = {k: v.detach().to(dtype=torch.float32) for k, v in mha.state_dict().items()}
    in_proj = state_dict["in_proj_weight"]
    q_proj, k_proj, v_proj = in_proj[:embed_dim], in_proj[embed_dim:2 * embed_dim], in_proj[2 * embed_dim:]
    output_proj = state_dict["out_proj.weight"]
    return tuple(w.t().numpy().astype(np.float64) for w in (q_proj, k_proj, v_proj, output_proj))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        expected, expected_attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    expected = (expected.squeeze(0) if mha.batch_first else expected.squeeze(1)).to(torch.float64).numpy()
    expected_attn = expected_attn.squeeze(0).to(torch.float64).numpy()

    actual, actual_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                               *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(actual - expected)))
    attn_diff = float(np.max(np.abs(actual_attn - expected_attn)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff,
            "match": bool(out_diff <= atol and attn_diff <= atol)}
