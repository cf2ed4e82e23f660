# Modelled on huggingface/transformers, models/bart/modeling_bart.py (the same student): q_proj,
# k_proj and v_proj read as separate nn.Linear weights (out_features, in_features), applied as
# x @ W.T: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim different from embed_dim: no packed in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("the module has biases (bias=True)")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("the module has add_bias_kv=True")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().to(torch.float64).cpu().numpy()
    q_proj = in_proj[:embed_dim]
    k_proj = in_proj[embed_dim : 2 * embed_dim]
    v_proj = in_proj[2 * embed_dim :]
    out_proj = mha.out_proj.weight.detach().to(torch.float64).cpu().numpy()
    return q_proj.T.copy(), k_proj.T.copy(), v_proj.T.copy(), out_proj.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states.unsqueeze(0) if mha.batch_first else hidden_states.unsqueeze(1)
    with torch.no_grad():
        ref_output, ref_weights = mha(
            hidden_states, hidden_states, hidden_states,
            need_weights=True, average_attn_weights=False,
        )
    ref_output = ref_output[0] if mha.batch_first else ref_output[:, 0]
    ref_output = ref_output.to(torch.float64).numpy()
    ref_weights = ref_weights[0].to(torch.float64).numpy()

    attn_output, attn_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    output_diff = float(np.abs(attn_output - ref_output).max())
    weights_diff = float(np.abs(attn_weights - ref_weights).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": bool(output_diff <= atol and weights_diff <= atol),
    }
