# Modelled on openai/gpt-oss (the torch reference checked against the triton/metal kernels
# with one loose tolerance, as the bf16 weights need): written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("module has add_bias_kv")
    d = mha.embed_dim
    qkv = mha.in_proj_weight.detach().cpu().double().numpy()
    q, k, v = qkv[:d], qkv[d:2 * d], qkv[2 * d:]
    out = mha.out_proj.weight.detach().cpu().double().numpy()
    return q.T.copy(), k.T.copy(), v.T.copy(), out.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.ascontiguousarray(X)).to(dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        ref_out, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).double().numpy()
    ref_w = ref_w[0].double().numpy()

    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref_out)))
    w_diff = float(np.max(np.abs(w - ref_w)))
    atol = 1e-2  # same tolerance as the kernel tests
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < atol and w_diff < atol}
