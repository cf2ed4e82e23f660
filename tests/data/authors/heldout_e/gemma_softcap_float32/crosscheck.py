# Modelled on google/gemma_pytorch (the same student): the fused qkv_proj weight split by
# [q_size, kv_size, kv_size], as gemma/model.py splits its output, and the module run in its own
# dtype: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("expected one fused qkv_proj (kdim == vdim == embed_dim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("qkv_proj and o_proj must be built with bias=False")
    hidden_size = mha.embed_dim
    q_size = kv_size = hidden_size
    with torch.no_grad():
        xq, xk, xv = mha.in_proj_weight.split([q_size, kv_size, kv_size], dim=0)
        o_proj = mha.out_proj.weight
        return tuple(w.t().to(torch.float64).numpy() for w in (xq, xk, xv, o_proj))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.tensor(X, dtype=dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        output, scores = mha(hidden_states, hidden_states, hidden_states,
                             need_weights=True, average_attn_weights=False)
    output = output[0] if mha.batch_first else output[:, 0]

    my_output, my_scores = multi_head_attention(np.asarray(X, np.float64),
                                                *weights_from_torch(mha), mha.num_heads)
    output_max_abs_diff = float(np.abs(my_output - output.double().numpy()).max())
    weights_max_abs_diff = float(np.abs(my_scores - scores[0].double().numpy()).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": output_max_abs_diff,
            "weights_max_abs_diff": weights_max_abs_diff,
            "match": output_max_abs_diff <= atol and weights_max_abs_diff <= atol}
