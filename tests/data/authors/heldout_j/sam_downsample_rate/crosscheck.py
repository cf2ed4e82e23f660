# Modelled on facebookresearch/segment-anything (tokens always laid out B x N_tokens x C, as
# the TwoWayTransformer flattens the image embedding `bxcxhxw -> bxhwxc`): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError("kdim / vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only bias=False modules are supported")
    C = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64)
    Wq, Wk, Wv = (w[i * C:(i + 1) * C].T.numpy().copy() for i in range(3))
    Wo = mha.out_proj.weight.detach().to(torch.float64).T.numpy().copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.out_proj.weight.dtype
    tokens = torch.as_tensor(X, dtype=dtype).unsqueeze(0)  # B x N_tokens x C
    with torch.no_grad():
        out_t, attn_t = mha(tokens, tokens, tokens, need_weights=True, average_attn_weights=False)
    out_t = out_t[0].to(torch.float64).numpy()
    attn_t = attn_t[0].to(torch.float64).numpy()
    out, attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                     mha.num_heads)
    d_out = float(np.abs(out - out_t).max())
    d_attn = float(np.abs(attn - attn_t).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_attn,
            "match": d_out <= tol and d_attn <= tol}
