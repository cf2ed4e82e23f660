# Modelled on triton-lang/triton, python/tutorials/06-fused-attention.py (test_op: a torch
# reference next to the kernel's output, compared with `torch.allclose(ref_out, tri_out,
# atol=1e-2, rtol=0)`): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim != embed_dim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")
    D_MODEL = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).cpu().numpy()
    Wq = w[0 * D_MODEL:1 * D_MODEL].T.copy()
    Wk = w[1 * D_MODEL:2 * D_MODEL].T.copy()
    Wv = w[2 * D_MODEL:3 * D_MODEL].T.copy()
    Wo = mha.out_proj.weight.detach().to(torch.float64).cpu().numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x[None] if mha.batch_first else x[:, None]
    # reference implementation
    with torch.no_grad():
        ref_out, ref_p = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).double().numpy()
    ref_p = ref_p[0].double().numpy()
    # numpy implementation
    tri_out, tri_p = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    # compare
    out_diff = float(np.max(np.abs(ref_out - tri_out)))
    p_diff = float(np.max(np.abs(ref_p - tri_p)))
    atol = 1e-2
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": p_diff,
        "match": bool(out_diff <= atol and p_diff <= atol),
    }
