# Modelled on facebookresearch/esm (the fairseq-style `MultiheadAttention.forward(query, key,
# value, need_weights=True, need_head_weights=False)`, which averages the weights over the heads
# unless `need_head_weights`; the pretrained-model loader's `upgrade_state_dict` renaming of
# `in_proj_weight` into q/k/v blocks): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().to(torch.float64)
    q_proj = in_proj[:embed_dim]
    k_proj = in_proj[embed_dim:2 * embed_dim]
    v_proj = in_proj[2 * embed_dim:]
    out_proj = mha.out_proj.weight.detach().to(torch.float64)
    return tuple(w.t().numpy().copy() for w in (q_proj, k_proj, v_proj, out_proj))


def cross_check(mha, X):
    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    ours, our_weights = multi_head_attention(np.asarray(X, dtype=np.float64), Wq, Wk, Wv, Wo,
                                             mha.num_heads)
    x = torch.as_tensor(np.asarray(X)).to(mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        theirs, their_weights = mha(x, x, x, need_weights=True)
    theirs = (theirs[0] if mha.batch_first else theirs[:, 0]).double().numpy()
    their_weights = their_weights.double().numpy()
    out_diff = float(np.abs(theirs - ours).max())
    w_diff = float(np.abs(their_weights - our_weights).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff < tol * max(1.0, float(np.abs(theirs).max())) and w_diff < tol)}
