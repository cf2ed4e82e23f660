# Modelled on tspeterkim/flash-attention-minimal, bench.py (a manual reference run side by side
# with the kernel, "attn values sanity check" by max abs difference with rtol=0): written in that
# style for this test corpus, not copied; the atol follows the module's dtype.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim != embed_dim: q, k, v have their own projection weights")
    for name in ("in_proj_bias", "bias_k", "bias_v"):
        if getattr(mha, name) is not None:
            raise ValueError(f"module has {name}; build it with bias=False and no add_bias_kv")
    if mha.out_proj.bias is not None:
        raise ValueError("module has out_proj.bias; build it with bias=False")
    C = mha.embed_dim
    w = mha.in_proj_weight.detach().to(device="cpu", dtype=torch.float64)
    Wq, Wk, Wv = (w[i * C:(i + 1) * C].T.numpy().copy() for i in range(3))
    Wo = mha.out_proj.weight.detach().to(device="cpu", dtype=torch.float64).T.numpy().copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        torch_result, torch_att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    torch_result = torch_result.squeeze(0 if mha.batch_first else 1).to(torch.float64).numpy()
    torch_att = torch_att[0].to(torch.float64).numpy()

    minimal_result, minimal_att = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.abs(minimal_result - torch_result).max())
    att_diff = float(np.abs(minimal_att - torch_att).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    out_atol = atol * max(1.0, float(np.abs(torch_result).max()))  # outputs are not O(1)
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": att_diff,
        "match": bool(
            np.allclose(minimal_result, torch_result, rtol=0, atol=out_atol)
            and np.allclose(minimal_att, torch_att, rtol=0, atol=atol)
        ),
    }
