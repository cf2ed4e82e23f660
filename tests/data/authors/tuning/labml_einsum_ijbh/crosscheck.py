# Modelled on labmlai/annotated_deep_learning_paper_implementations (its [seq_len, batch_size,
# d_model] convention, which is nn.MultiheadAttention's batch_first=False layout): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate query/key/value projections are not supported")
    if any(b is not None for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v)):
        raise ValueError("bias must be False")
    d_model = mha.embed_dim
    w = mha.in_proj_weight.detach().double().numpy().reshape(3, d_model, d_model)
    wq, wk, wv = (np.ascontiguousarray(w[i].T) for i in range(3))
    wo = np.ascontiguousarray(mha.out_proj.weight.detach().double().numpy().T)
    return wq, wk, wv, wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.as_tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    # [seq_len, batch_size=1, d_model], or [batch_size=1, seq_len, d_model] when batch_first
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn = attn[0].double().numpy()
    mine, mine_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                           *weights_from_torch(mha), mha.num_heads)
    od = float(np.abs(mine - out).max())
    wd = float(np.abs(mine_attn - attn).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": od, "weights_max_abs_diff": wd, "match": od < tol and wd < tol}
