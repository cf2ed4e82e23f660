# Modelled on Aurélien Géron, Hands-On Machine Learning (3rd ed., ch. 16 and its notebook: a
# layer's weights read with `get_weights()`, an attention layer checked by recomputing its
# output with plain tensor ops and comparing with `np.allclose`): written in that style for this
# test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention  # noqa: F401


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("the module has biases")
    d = mha.embed_dim
    w_in = mha.in_proj_weight.detach().double().numpy()
    w_q, w_k, w_v = w_in[:d], w_in[d:2 * d], w_in[2 * d:]
    w_o = mha.out_proj.weight.detach().double().numpy()
    return w_q.T.copy(), w_k.T.copy(), w_v.T.copy(), w_o.T.copy()


def cross_check(mha, X):
    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    h = mha.num_heads
    n, d = X.shape
    X = np.asarray(X, dtype=np.float64)
    # recompute what the layer does with plain ops, as the book's notebook does
    q = (X @ Wq).reshape(n, h, d // h).transpose(1, 0, 2)
    k = (X @ Wk).reshape(n, h, d // h).transpose(1, 0, 2)
    v = (X @ Wv).reshape(n, h, d // h).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d // h)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    my_weights = scores / scores.sum(-1, keepdims=True)
    my_out = (my_weights @ v).transpose(1, 0, 2).reshape(n, d) @ Wo

    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    w = w[0].double().numpy()
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": float(np.abs(out - my_out).max()),
        "weights_max_abs_diff": float(np.abs(w - my_weights).max()),
        "match": bool(np.allclose(out, my_out, rtol=0, atol=tol)
                      and np.allclose(w, my_weights, rtol=0, atol=tol)),
    }
