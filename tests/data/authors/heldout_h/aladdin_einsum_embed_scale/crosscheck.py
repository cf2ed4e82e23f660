# Modelled on aladdinpersson/Machine-Learning-Collection, transformer_from_scratch.py (the same
# student): everything (N, seq_len, embed_size), N training examples first, as in the
# __main__ test of that file: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must be the same as embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("expected bias=False")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("expected add_bias_kv=False")
    embed_size = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64)
    queries, keys, values = w[:embed_size], w[embed_size:2 * embed_size], w[2 * embed_size:]
    fc_out = mha.out_proj.weight.detach().to(torch.float64)
    return tuple(m.T.numpy().copy() for m in (queries, keys, values, fc_out))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.out_proj.weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype).unsqueeze(0)  # (N, seq_len, embed_size)
    with torch.no_grad():
        out, attention = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out[0].to(torch.float64).numpy()
    attention = attention[0].to(torch.float64).numpy()

    mine, my_attention = multi_head_attention(np.asarray(X, dtype=np.float64),
                                              *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(mine - out)))
    weights_diff = float(np.max(np.abs(my_attention - attention)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff,
            "match": output_diff <= tol and weights_diff <= tol}
