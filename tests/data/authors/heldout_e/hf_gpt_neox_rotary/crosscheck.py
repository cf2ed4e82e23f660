# Modelled on huggingface/transformers, models/gpt_neox/modeling_gpt_neox.py (the same student):
# reading a checkpoint's weights into one's own layout, as the conversion scripts do: written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("attention biases are not supported")
    hidden_size = mha.embed_dim
    query_key_value = mha.in_proj_weight.detach().to(torch.float64).cpu().numpy()
    w_q = query_key_value[:hidden_size]
    w_k = query_key_value[hidden_size : 2 * hidden_size]
    w_v = query_key_value[2 * hidden_size :]
    w_dense = mha.out_proj.weight.detach().to(torch.float64).cpu().numpy()
    # torch Linear computes x @ W.T
    return w_q.T, w_k.T, w_v.T, w_dense.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.out_proj.weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states.unsqueeze(0) if mha.batch_first else hidden_states.unsqueeze(1)
    with torch.no_grad():
        attn_output, attn_weights = mha(hidden_states, hidden_states, hidden_states,
                                        need_weights=True, average_attn_weights=False)
    attn_output = attn_output[0] if mha.batch_first else attn_output[:, 0]
    attn_output = attn_output.double().numpy()
    attn_weights = attn_weights[0].double().numpy()

    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                        mha.num_heads)
    output_max_abs_diff = float(np.max(np.abs(out - attn_output)))
    weights_max_abs_diff = float(np.max(np.abs(weights - attn_weights)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": output_max_abs_diff <= atol and weights_max_abs_diff <= atol,
    }
