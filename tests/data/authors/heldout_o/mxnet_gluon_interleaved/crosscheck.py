# Modelled on Apache MXNet Gluon (the contrib ops `interleaved_matmul_selfatt_qk(qkv, heads)` /
# `interleaved_matmul_selfatt_valatt`, which read one fused projection as
# (heads, 3, head_dim) blocks, and the weight conversion that lays a model's q, k, v out that
# way; `nd.array(x).asnumpy()`, `.asscalar()`): written in that style for this test corpus, not
# copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    units = mha.embed_dim
    heads = mha.num_heads
    head_dim = units // heads
    qkv = mha.in_proj_weight.detach().cpu().double().numpy()
    # the fused projection is interleaved: for each head its query, key and value rows
    qkv = qkv.reshape(heads, 3, head_dim, units)
    w_q = qkv[:, 0].reshape(units, units)
    w_k = qkv[:, 1].reshape(units, units)
    w_v = qkv[:, 2].reshape(units, units)
    w_o = mha.out_proj.weight.detach().cpu().double().numpy()
    return w_q.T, w_k.T, w_v.T, w_o.T


def cross_check(mha, X):
    w_q, w_k, w_v, w_o = weights_from_torch(mha)
    out, att = multi_head_attention(np.asarray(X, dtype=np.float64), w_q, w_k, w_v, w_o,
                                    mha.num_heads)
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = ref_out[0] if mha.batch_first else ref_out[:, 0]
    ref_out = ref_out.double().numpy()
    ref_att = ref_att[0].double().numpy()
    out_diff = np.abs(ref_out - out).max().item()
    att_diff = np.abs(ref_att - att).max().item()
    atol = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, np.abs(ref_out).max().item())
    return {"output_max_abs_diff": float(out_diff), "weights_max_abs_diff": float(att_diff),
            "match": bool(out_diff < atol * scale and att_diff < atol)}
