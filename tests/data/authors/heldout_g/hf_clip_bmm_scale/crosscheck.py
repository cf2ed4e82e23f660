# Modelled on huggingface/transformers, models/clip/modeling_clip.py (the same student):
# q_proj, k_proj, v_proj and out_proj read as nn.Linear weights (out, in) and used as x @ W.T;
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("expected a module without biases (bias=False, add_bias_kv=False)")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().cpu().numpy()
    q_proj = in_proj[:embed_dim]
    k_proj = in_proj[embed_dim : 2 * embed_dim]
    v_proj = in_proj[2 * embed_dim :]
    out_proj = mha.out_proj.weight.detach().cpu().numpy()
    return q_proj.T, k_proj.T, v_proj.T, out_proj.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.from_numpy(np.asarray(X)).to(dtype)
    hidden_states = hidden_states.unsqueeze(0) if mha.batch_first else hidden_states.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_weights = mha(
            hidden_states, hidden_states, hidden_states,
            need_weights=True, average_attn_weights=False,
        )
    ref_out = ref_out[0] if mha.batch_first else ref_out[:, 0]
    ref_out = ref_out.double().numpy()
    ref_weights = ref_weights[0].double().numpy()

    Wq, Wk, Wv, Wo = (np.asarray(w, dtype=np.float64) for w in weights_from_torch(mha))
    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), Wq, Wk, Wv, Wo,
                                        mha.num_heads)
    output_diff = float(np.abs(out - ref_out).max())
    weights_diff = float(np.abs(weights - ref_weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": bool(output_diff <= tol and weights_diff <= tol),
    }
