# Modelled on huggingface/transformers (conversion scripts that copy q/k/v weights across with
# `.weight.data` and only look for the projection bias Qwen2 has): written in that style for
# this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: no in_proj_weight")
    if mha.in_proj_bias is not None:
        raise ValueError("q/k/v projections have a bias")
    hidden_size = mha.embed_dim
    q_w, k_w, v_w = mha.in_proj_weight.detach().double().split(hidden_size, dim=0)
    o_w = mha.out_proj.weight.detach().double()
    return tuple(w.T.contiguous().numpy() for w in (q_w, k_w, v_w, o_w))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.tensor(X, dtype=dtype).unsqueeze(0 if mha.batch_first else 1)
    with torch.no_grad():
        ref_out, ref_w = mha(hidden_states, hidden_states, hidden_states,
                             need_weights=True, average_attn_weights=False)
    ref_out = ref_out.squeeze(0 if mha.batch_first else 1).double().numpy()
    ref_w = ref_w.squeeze(0).double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.abs(out - ref_out).max())
    w_diff = float(np.abs(w - ref_w).max())
    atol = 1e-5 if dtype == torch.float32 else 1e-10
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff <= atol * 10 and w_diff <= atol * 10)}
