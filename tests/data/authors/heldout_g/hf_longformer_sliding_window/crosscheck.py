# Modelled on huggingface/transformers, models/longformer/modeling_longformer.py (the same
# student): the module fed (seq_len, batch_size, embed_dim), as LongformerSelfAttention works
# after hidden_states.transpose(0, 1): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: no in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("the module has biases")
    embed_dim = mha.embed_dim
    w = mha.in_proj_weight.detach().double()
    query = w[:embed_dim].t().numpy()
    key = w[embed_dim : 2 * embed_dim].t().numpy()
    value = w[2 * embed_dim :].t().numpy()
    output = mha.out_proj.weight.detach().double().t().numpy()
    return query, key, value, output


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    # (seq_len, batch_size, embed_dim)
    hidden_states = torch.tensor(np.asarray(X), dtype=dtype).unsqueeze(1)
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = out[:, 0].double().numpy()
    probs = probs[0].double().numpy()
    mine, mine_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    od = float(np.abs(mine - out).max())
    pd = float(np.abs(mine_probs - probs).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": od, "weights_max_abs_diff": pd,
            "match": bool(od <= tol and pd <= tol)}
