# Modelled on huggingface/transformers, models/opt/modeling_opt.py (the same student): q_proj,
# k_proj, v_proj and out_proj as nn.Linear (out, in) weights; a bias is looked for where OPT keeps
# it (enable_bias): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("expected one in_proj_weight (kdim == vdim == embed_dim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("expected enable_bias=False (bias=False)")
    embed_dim = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    q_proj, k_proj, v_proj = w[:embed_dim], w[embed_dim : 2 * embed_dim], w[2 * embed_dim :]
    out_proj = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return q_proj.T.copy(), k_proj.T.copy(), v_proj.T.copy(), out_proj.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.tensor(np.asarray(X), dtype=dtype)
    if mha.batch_first:
        hidden_states = hidden_states.unsqueeze(0)
    else:
        hidden_states = hidden_states.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_attn = mha(hidden_states, hidden_states, hidden_states,
                                need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).to(torch.float64).numpy()
    ref_attn = ref_attn[0].to(torch.float64).numpy()

    attn_output, attn_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    output_diff = float(np.max(np.abs(attn_output - ref_out)))
    weights_diff = float(np.max(np.abs(attn_weights - ref_attn)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": output_diff <= atol and weights_diff <= atol,
    }
