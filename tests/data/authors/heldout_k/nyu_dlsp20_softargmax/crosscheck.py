# Modelled on Atcold/NYU-DLSP20, 15-transformer.ipynb (the encoder layer's
# `attn_output, _ = self.mha(x, x, x)`, the "sanity checks" printing attention weights and outputs
# side by side) and the course's habit of comparing with PyTorch's built-in modules: written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("d_input given: W_q, W_k, W_v are separate matrices")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("W_q, W_k, W_v, W_h must have no bias")
    if mha.bias_k is not None:
        raise ValueError("add_bias_kv is not supported")
    d_model = mha.embed_dim
    W = mha.in_proj_weight.detach().double()
    W_q, W_k, W_v = W[:d_model], W[d_model:2 * d_model], W[2 * d_model:]
    W_h = mha.out_proj.weight.detach().double()
    # nn.Linear does x @ W.T
    return tuple(w.t().contiguous().numpy() for w in (W_q, W_k, W_v, W_h))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X, dtype=np.float64)).to(dtype)
    x = x[None] if mha.batch_first else x[:, None]

    with torch.no_grad():
        attn_output, attn_weights = mha(x, x, x)
    attn_output = attn_output[0] if mha.batch_first else attn_output[:, 0]
    attn_output = attn_output.double().numpy()   # (seq_len, d_model)
    attn_weights = attn_weights[0].double().numpy()  # (seq_len, seq_len)

    H, A = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    print('Attention weights are:', A)
    print('Output is:', H)

    out_diff = float(np.abs(H - attn_output).max())
    w_diff = float(np.abs(A - attn_weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": w_diff,
        "match": bool(out_diff <= tol * max(1.0, float(np.abs(attn_output).max())) and w_diff <= tol),
    }
