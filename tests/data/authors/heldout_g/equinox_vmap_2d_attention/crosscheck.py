# Modelled on patrick-kidger/equinox, equinox/nn/_attention.py (the same student), calling the
# torch module the way equinox's layer is called, mha(query, key_, value): written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("query_size, key_size and value_size must be equal")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    size = mha.embed_dim
    w = mha.in_proj_weight.detach().numpy().astype(np.float64)
    out = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return w[:size].T, w[size : 2 * size].T, w[2 * size :].T, out.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, attn = mha(x, x, x)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn = attn[0].double().numpy()
    mine, mine_w = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    o = float(np.max(np.abs(mine - out)))
    w = float(np.max(np.abs(mine_w - attn)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": o, "weights_max_abs_diff": w,
            "match": o <= atol and w <= atol}
