# Modelled on rasbt/LLMs-from-scratch (the same student): comparing one's own attention with
# torch's as the book's exercises do: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("qkv_bias must be False")
    d_out = mha.embed_dim
    W_query = mha.in_proj_weight[:d_out].detach().double().numpy()
    W_key = mha.in_proj_weight[d_out : 2 * d_out].detach().double().numpy()
    W_value = mha.in_proj_weight[2 * d_out :].detach().double().numpy()
    out_proj = mha.out_proj.weight.detach().double().numpy()
    return W_query.T, W_key.T, W_value.T, out_proj.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    inputs = torch.tensor(X, dtype=dtype)
    batch = inputs.unsqueeze(0) if mha.batch_first else inputs.unsqueeze(1)
    with torch.no_grad():
        ref_context, ref_weights = mha(batch, batch, batch, need_weights=True,
                                       average_attn_weights=False)
    ref_context = (ref_context[0] if mha.batch_first else ref_context[:, 0]).double().numpy()
    ref_weights = ref_weights[0].double().numpy()
    context, weights = multi_head_attention(X.astype(np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(context - ref_context).max())
    w_diff = float(np.abs(weights - ref_weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
