# Modelled on huggingface/transformers, models/falcon/modeling_falcon.py (the same student): the
# fused query_key_value weight is a Linear's (out, in) matrix, cut into its query, key and value
# rows and transposed: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only bias=False modules are supported")
    hidden_size = mha.embed_dim
    query_key_value = mha.in_proj_weight.detach().double().numpy()
    query, key, value = np.split(query_key_value, [hidden_size, 2 * hidden_size], axis=0)
    dense = mha.out_proj.weight.detach().double().numpy()
    return query.T.copy(), key.T.copy(), value.T.copy(), dense.T.copy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.tensor(np.asarray(X), dtype=dtype)
    if mha.batch_first:
        hidden_states = hidden_states[None, :, :]
    else:
        hidden_states = hidden_states[:, None, :]
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = out[0] if mha.batch_first else out[:, 0]
    out = out.double().numpy()
    probs = probs[0].double().numpy()

    my_out, my_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(my_out - out)))
    weights_diff = float(np.max(np.abs(my_probs - probs)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff,
            "match": bool(output_diff < tol and weights_diff < tol)}
