# Modelled on bentrevett/pytorch-seq2seq (the same student): inputs built with torch.FloatTensor, as
# the tutorial's scale is: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("build the module with bias=False")
    hid_dim = mha.embed_dim
    W = mha.in_proj_weight.detach().double().numpy()
    fc_q, fc_k, fc_v = W[:hid_dim], W[hid_dim : 2 * hid_dim], W[2 * hid_dim :]
    fc_o = mha.out_proj.weight.detach().double().numpy()
    return fc_q.T, fc_k.T, fc_v.T, fc_o.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    src = torch.FloatTensor(X)  # [src len, hid dim]
    src = src.unsqueeze(0) if mha.batch_first else src.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(src, src, src, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn = attn[0].double().numpy()

    x, attention = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(x - out).max())
    w_diff = float(np.abs(attention - attn).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.abs(x).max())) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
