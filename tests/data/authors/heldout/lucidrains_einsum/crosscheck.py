# Modelled on lucidrains-style tests (build the torch module, feed one batch, compare with
# allclose-like bounds): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import exists, multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not exists(mha.in_proj_weight):
        raise ValueError("separate q, k, v projections are not supported")
    if exists(mha.in_proj_bias) or exists(mha.out_proj.bias) or exists(mha.bias_k):
        raise ValueError("biases are not supported")
    to_qkv = mha.in_proj_weight.detach().double().t()  # (dim, 3 * dim)
    wq, wk, wv = to_qkv.chunk(3, dim=-1)
    wo = mha.out_proj.weight.detach().double().t()
    return tuple(t.contiguous().numpy() for t in (wq, wk, wv, wo))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.from_numpy(np.asarray(X, dtype=np.float64)).to(mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out.squeeze(0 if mha.batch_first else 1).double().numpy()
    attn = attn.squeeze(0).double().numpy()
    mine, mine_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                           *weights_from_torch(mha), mha.num_heads)
    od = float(np.abs(mine - out).max())
    wd = float(np.abs(mine_attn - attn).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": od, "weights_max_abs_diff": wd, "match": od < tol and wd < tol}
