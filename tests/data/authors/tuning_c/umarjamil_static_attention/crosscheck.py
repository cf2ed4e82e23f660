# Modelled on hkproj/pytorch-transformer (Umar Jamil) (the same student): written in that style for
# this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("the module must be built with bias=False")
    d_model = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    w_q = w[:d_model].T.copy()  # nn.Linear stores (out, in)
    w_k = w[d_model : 2 * d_model].T.copy()
    w_v = w[2 * d_model :].T.copy()
    w_o = mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()
    return w_q, w_k, w_v, w_o


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    # (seq_len, d_model) --> (1, seq_len, d_model) or (seq_len, 1, d_model)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out.squeeze(0) if mha.batch_first else out.squeeze(1)).to(torch.float64).numpy()
    attn = attn.squeeze(0).to(torch.float64).numpy()

    my_out, my_attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.abs(my_out - out).max())
    weights_diff = float(np.abs(my_attn - attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = output_diff <= tol * max(1.0, float(np.abs(my_out).max())) and weights_diff <= tol
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff, "match": bool(match)}
