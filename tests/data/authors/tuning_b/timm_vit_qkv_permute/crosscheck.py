# Modelled on huggingface/pytorch-image-models (timm), the same student's adapter: written in that
# style for this test corpus, not copied (timm's checkpoint converters read torch weights as .T).
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim differ from embed_dim")
    if any(b is not None for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v)):
        raise ValueError("module has biases")
    qkv_w = mha.in_proj_weight.detach().to(torch.float64)
    q_w, k_w, v_w = qkv_w.chunk(3)
    proj_w = mha.out_proj.weight.detach().to(torch.float64)
    return tuple(w.t().numpy().copy() for w in (q_w, k_w, v_w, proj_w))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.inference_mode():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn = attn[0].double().numpy()
    my_out, my_attn = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.abs(my_out - out).max())
    attn_diff = float(np.abs(my_attn - attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    ok = out_diff <= tol * max(1.0, float(np.abs(out).max())) and attn_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff, "match": bool(ok)}
