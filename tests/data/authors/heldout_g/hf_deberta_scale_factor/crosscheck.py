# Modelled on huggingface/transformers, models/deberta/modeling_deberta.py (the same student):
# the fused in_proj weight chunked into query, key and value (torch.chunk along dim 0) and used as
# x @ W.T: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("in_proj has a bias: expected bias=False")
    if mha.out_proj.bias is not None:
        raise ValueError("out_proj has a bias: expected bias=False")
    with torch.no_grad():
        ws = torch.chunk(mha.in_proj_weight.to(torch.float64), 3, dim=0)
        query, key, value = (w.t().numpy().copy() for w in ws)
        dense = mha.out_proj.weight.to(torch.float64).t().numpy().copy()
    return query, key, value, dense


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    probs = probs[0].to(torch.float64).numpy()

    my_out, my_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.max(np.abs(my_out - out)))
    d_w = float(np.max(np.abs(my_probs - probs)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w,
            "match": d_out < tol and d_w < tol}
