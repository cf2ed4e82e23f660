# Modelled on microsoft/Swin-Transformer, models/swin_transformer_v2.py (the same student):
# the fused qkv Linear of WindowAttention is laid out as torch's in_proj_weight, so the three
# blocks are read in order and transposed for x @ W: written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim (no fused qkv)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    if mha.bias_k is not None:
        raise ValueError("add_bias_kv is not supported")
    dim = mha.embed_dim
    qkv = mha.in_proj_weight.detach().cpu().double().reshape(3, dim, dim)
    Wq, Wk, Wv = (w.T.numpy().copy() for w in qkv)
    Wo = mha.out_proj.weight.detach().cpu().double().T.numpy().copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = y.squeeze(0) if mha.batch_first else y.squeeze(1)
    y = y.double().numpy()
    attn = attn[0].double().numpy()
    my_y, my_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                         *weights_from_torch(mha), mha.num_heads)
    dy = float(np.abs(my_y - y).max())
    dattn = float(np.abs(my_attn - attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": dy, "weights_max_abs_diff": dattn,
            "match": dy <= tol and dattn <= tol}
