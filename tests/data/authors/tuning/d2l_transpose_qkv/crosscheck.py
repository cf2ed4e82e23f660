# Modelled on d2l-ai/d2l-en (the book's habit of pulling parameters out with .detach().numpy() and
# chunking a stacked weight): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    W_q, W_k, W_v = mha.in_proj_weight.chunk(3)
    W_o = mha.out_proj.weight
    return tuple(w.detach().numpy().T for w in (W_q, W_k, W_v, W_o))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    X_t = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    X_t = X_t.unsqueeze(0) if mha.batch_first else X_t.unsqueeze(1)
    with torch.no_grad():
        Y, A = mha(X_t, X_t, X_t, average_attn_weights=False)
    Y = (Y[0] if mha.batch_first else Y[:, 0]).numpy().astype(np.float64)
    A = A[0].numpy().astype(np.float64)
    Y_mine, A_mine = multi_head_attention(np.asarray(X, dtype=np.float64),
                                          *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(Y - Y_mine).max())
    w_diff = float(np.abs(A - A_mine).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
