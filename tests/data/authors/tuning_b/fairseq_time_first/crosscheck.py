# Modelled on facebookresearch/fairseq (the same student; fairseq is time-first, (T, B, C), so the
# batch axis goes second unless the module says batch_first): written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("fairseq-style separate q_proj/k_proj/v_proj are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv=True is not supported")
    embed_dim = mha.embed_dim
    w = mha.in_proj_weight.detach().to(dtype=torch.float64)
    q_proj = w[:embed_dim].t().numpy()
    k_proj = w[embed_dim : 2 * embed_dim].t().numpy()
    v_proj = w[2 * embed_dim :].t().numpy()
    out_proj = mha.out_proj.weight.detach().to(dtype=torch.float64).t().numpy()
    return q_proj, k_proj, v_proj, out_proj


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype).unsqueeze(1)  # (T, B=1, C)
    if mha.batch_first:
        x = x.transpose(0, 1)  # (B, T, C)
    with torch.no_grad():
        attn, attn_weights = mha(x, x, x, need_weights=True, average_attn_weights=False)
    if mha.batch_first:
        attn = attn.transpose(0, 1)
    attn = attn[:, 0].to(torch.float64).numpy()
    attn_weights = attn_weights[0].to(torch.float64).numpy()
    ours, our_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.abs(ours - attn).max())
    w_diff = float(np.abs(our_weights - attn_weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.abs(attn).max())) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
