# Modelled on huggingface/transformers, models/codegen/modeling_codegen.py (the same student):
# the fused projection cut in CodeGen's `query, value, key` order, and everything run in
# float32 as CodeGen's _attn does (`query.to(torch.float32)`): written in that style for this
# test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("CodeGen projections have no bias")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")
    embed_dim = mha.embed_dim
    qkv = mha.in_proj_weight.detach().to(torch.float64)
    query, value, key = torch.split(qkv, embed_dim, dim=0)
    out = mha.out_proj.weight.detach().to(torch.float64)
    return (query.T.numpy().copy(), key.T.numpy().copy(), value.T.numpy().copy(),
            out.T.numpy().copy())


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    hidden_states = torch.from_numpy(np.asarray(X).astype(np.float32))
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        ref_out, ref_w = mha(hidden_states, hidden_states, hidden_states,
                             need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).numpy().astype(np.float64)
    ref_w = ref_w[0].numpy().astype(np.float64)

    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref_out)))
    w_diff = float(np.max(np.abs(w - ref_w)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
