# Modelled on the same CMU 10-414/714 lecture notebook's comparison with nn.MultiheadAttention
# (attention.in_proj_weight.detach().numpy().T as W_KQV, out_proj.weight.detach().numpy().T):
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias=False only")
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must be embed_dim")
    W_KQV = mha.in_proj_weight.detach().numpy().T
    Wq, Wk, Wv = np.split(W_KQV, 3, axis=1)
    W_out = mha.out_proj.weight.detach().numpy().T
    return Wq, Wk, Wv, W_out


def cross_check(mha, X):
    X_ = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    X_ = X_[None] if mha.batch_first else X_[:, None]
    Y_, A_ = mha(X_, X_, X_, need_weights=True, average_attn_weights=False)
    Y_ = (Y_[0] if mha.batch_first else Y_[:, 0]).detach().numpy()
    A_ = A_[0].detach().numpy()
    Y, A = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(Y - Y_).max())
    w_diff = float(np.abs(A - A_).max())
    tol = 1e-5 if mha.in_proj_weight.dtype == torch.float32 else 1e-10
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
