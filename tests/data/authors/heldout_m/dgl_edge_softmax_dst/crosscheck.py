# Modelled on dmlc/dgl's unit tests (`tests/python/pytorch/nn/test_nn.py`: `F.allclose`,
# `.detach().cpu().numpy()`, the module moved to eval): written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v):
        if b is not None:
            raise ValueError("bias must be False")
    w = mha.in_proj_weight.detach().cpu().double().numpy()
    d = mha.embed_dim
    fc_q, fc_k, fc_v = w[:d], w[d:2 * d], w[2 * d:]
    fc_o = mha.out_proj.weight.detach().cpu().double().numpy()
    return fc_q.T.copy(), fc_k.T.copy(), fc_v.T.copy(), fc_o.T.copy()


def cross_check(mha, X):
    mha = mha.eval()
    feat = torch.tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    feat = feat.unsqueeze(0) if mha.batch_first else feat.unsqueeze(1)
    with torch.no_grad():
        rst, attn = mha(feat, feat, feat, need_weights=True, average_attn_weights=False)
    rst = rst.squeeze(0 if mha.batch_first else 1).detach().cpu().double().numpy()
    attn = attn.squeeze(0).detach().cpu().double().numpy()
    my_rst, my_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                           *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.max(np.abs(rst - my_rst)))
    d_attn = float(np.max(np.abs(attn - my_attn)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    scale = max(1.0, float(np.max(np.abs(rst))))
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_attn,
            "match": d_out <= tol * scale and d_attn <= tol}
