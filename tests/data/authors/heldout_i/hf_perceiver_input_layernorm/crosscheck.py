# Modelled on huggingface/transformers, models/perceiver/modeling_perceiver.py (the same
# student): the module's query/key/value read from the fused in_proj_weight with the
# `_qkv_same_embed_dim` flag and the Linear (out, in) layout transposed: written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kv_dim must equal q_dim to read in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("the attention has biases")
    qk_channels = mha.embed_dim
    w = mha.in_proj_weight.detach().double()
    query = w[:qk_channels].t().numpy().copy()
    key = w[qk_channels:2 * qk_channels].t().numpy().copy()
    value = w[2 * qk_channels:].t().numpy().copy()
    dense = mha.out_proj.weight.detach().double().t().numpy().copy()
    return query, key, value, dense


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.from_numpy(np.array(X)).to(dtype)
    if mha.batch_first:
        hidden_states = hidden_states.unsqueeze(0)
    else:
        hidden_states = hidden_states.unsqueeze(1)
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = out.squeeze(0 if mha.batch_first else 1).double().numpy()
    probs = probs.squeeze(0).double().numpy()

    my_out, my_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_out - out).max())
    probs_diff = float(np.abs(my_probs - probs).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": probs_diff,
            "match": out_diff < tol and probs_diff < tol}
