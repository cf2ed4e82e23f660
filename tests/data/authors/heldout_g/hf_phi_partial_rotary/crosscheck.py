# Modelled on huggingface/transformers, models/phi/modeling_phi.py (the same student): the
# projections read as (out, in) Linear weights; hidden_states given to the model as a float
# tensor: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    d = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    q_proj, k_proj, v_proj = w[:d], w[d : 2 * d], w[2 * d :]
    dense = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return q_proj.T, k_proj.T, v_proj.T, dense.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    hidden_states = torch.from_numpy(np.asarray(X)).float()
    if mha.batch_first:
        hidden_states = hidden_states.unsqueeze(0)
    else:
        hidden_states = hidden_states.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_w = mha(hidden_states, hidden_states, hidden_states,
                             need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).double().numpy()
    ref_w = ref_w[0].double().numpy()

    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.abs(out - ref_out).max())
    w_diff = float(np.abs(w - ref_w).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff <= tol and w_diff <= tol}
