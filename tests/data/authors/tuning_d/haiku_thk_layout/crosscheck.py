# Modelled on google-deepmind/dm-haiku (the same student): haiku's Linear keeps w as
# (in, out), so torch's (out, in) weights are transposed on the way in: written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("need a packed in_proj_weight (kdim == vdim == embed_dim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("with_bias=False only")
    d = mha.embed_dim
    w_in = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    w_out = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64)
    return w_in[:d].T, w_in[d : 2 * d].T, w_in[2 * d :].T, w_out.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(X).to(dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        y, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    w = w[0].double().numpy()
    mine, mine_w = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(mine - y).max())
    w_diff = float(np.abs(mine_w - w).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff <= tol and w_diff <= tol}
