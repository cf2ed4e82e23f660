# Modelled on the deeplearning.ai Sequence Models course, week 4 (the same student): written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use bias=False")
    d_model = mha.embed_dim
    W = mha.in_proj_weight.detach().to(torch.float64).numpy()
    wq = W[0:d_model].T
    wk = W[d_model : 2 * d_model].T
    wv = W[2 * d_model : 3 * d_model].T
    dense = mha.out_proj.weight.detach().to(torch.float64).numpy().T
    return wq, wk, wv, dense


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    if mha.batch_first:
        x = x.unsqueeze(0)  # (1, seq_len, d_model)
    else:
        x = x.unsqueeze(1)  # (seq_len, 1, d_model)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out.squeeze(0) if mha.batch_first else out.squeeze(1)
    out = out.to(torch.float64).numpy()
    attn = attn.squeeze(0).to(torch.float64).numpy()
    my_out, my_attn = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(my_out - out)))
    w_diff = float(np.max(np.abs(my_attn - attn)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
