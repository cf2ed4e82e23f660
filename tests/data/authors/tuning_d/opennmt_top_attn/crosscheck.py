# Modelled on OpenNMT/OpenNMT-py (the same student): linear_query/linear_keys/linear_values read
# from torch's packed projection: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("separate key/value dims are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only bias=False modules")
    model_dim = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64)
    linear_query = w[:model_dim]
    linear_keys = w[model_dim : 2 * model_dim]
    linear_values = w[2 * model_dim :]
    final_linear = mha.out_proj.weight.detach().to(torch.float64)
    return (linear_query.t().numpy(), linear_keys.t().numpy(), linear_values.t().numpy(),
            final_linear.t().numpy())


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    src = torch.tensor(X, dtype=dtype)
    src = src.unsqueeze(0) if mha.batch_first else src.unsqueeze(1)
    with torch.no_grad():
        # key, value, query: self-attention, all three the same
        ref_out, ref_attn = mha(src, src, src, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).to(torch.float64).numpy()
    ref_attn = ref_attn[0].to(torch.float64).numpy()
    out, attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref_out)))
    attn_diff = float(np.max(np.abs(attn - ref_attn)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff,
            "match": bool(out_diff < tol and attn_diff < tol)}
