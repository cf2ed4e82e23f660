# Modelled on lucidrains/x-transformers (the same student): exists / default helpers and weights
# moved across layouts in a comprehension: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def exists(val):
    return val is not None


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not exists(mha.in_proj_weight):
        raise ValueError("kdim and vdim must equal dim")
    if exists(mha.in_proj_bias) or exists(mha.out_proj.bias) or exists(mha.bias_k):
        raise ValueError("attention must be built without bias")
    to_q, to_k, to_v = mha.in_proj_weight.detach().chunk(3, dim=0)
    to_out = mha.out_proj.weight.detach()
    return tuple(t.double().t().numpy() for t in (to_q, to_k, to_v, to_out))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out[0] if mha.batch_first else out[:, 0]
    my_out, my_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                           *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_out - out.double().numpy()).max())
    attn_diff = float(np.abs(my_attn - attn[0].double().numpy()).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return dict(output_max_abs_diff=out_diff, weights_max_abs_diff=attn_diff,
                match=out_diff <= tol and attn_diff <= tol)
