# Modelled on the Colab habit of CodeEmporium's notebooks (calling the module and converting its
# outputs with .numpy() straight away, outside torch.no_grad()): written in that style for this
# test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    qkv = mha.in_proj_weight.detach().double().numpy()
    d_model = mha.embed_dim
    q_w, k_w, v_w = qkv[:d_model], qkv[d_model : 2 * d_model], qkv[2 * d_model :]
    o_w = mha.out_proj.weight.detach().double().numpy()
    return q_w.T, k_w.T, v_w.T, o_w.T


def cross_check(mha, X):
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    values, attention = mha(x, x, x, need_weights=True, average_attn_weights=False)
    values = (values[0] if mha.batch_first else values[:, 0]).numpy()
    attention = attention[0].numpy()
    my_values, my_attention = multi_head_attention(np.asarray(X, dtype=np.float64),
                                                   *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(values - my_values)))
    w_diff = float(np.max(np.abs(attention - my_attention)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
