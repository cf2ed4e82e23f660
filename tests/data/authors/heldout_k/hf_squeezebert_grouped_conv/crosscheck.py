# Modelled on huggingface/transformers, src/transformers/models/squeezebert/modeling_squeezebert.py
# (nn.Linear weights seen as the (cout, cin, 1) kernels of 1x1 Conv1d layers; the encoder's
# `hidden_states.permute(0, 2, 1)` between [N, W, C] and [N, C, W]): written in that style for
# this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def _as_conv_kernel(weight):
    # Linear (out, in) == Conv1d kernel (cout, cin, 1)
    return weight.detach().to(torch.float64).unsqueeze(-1)


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: separate q/k/v projections")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("module has add_bias_kv")
    c = mha.embed_dim
    kernel = _as_conv_kernel(mha.in_proj_weight)  # (3C, C, 1)
    q_k, k_k, v_k = kernel[:c], kernel[c:2 * c], kernel[2 * c:]
    o_k = _as_conv_kernel(mha.out_proj.weight)
    # the exercise applies X @ W: W = kernel[:, :, 0].T, shape (cin, cout)
    return tuple(k[:, :, 0].T.contiguous().numpy() for k in (q_k, k_k, v_k, o_k))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    batch_dim = 0 if mha.batch_first else 1
    x = x.unsqueeze(batch_dim)
    with torch.no_grad():
        out_t, attn_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_t = out_t.select(batch_dim, 0).to(torch.float64).numpy()
    attn_t = attn_t[0].to(torch.float64).numpy()

    out, attn = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(out - out_t)))
    attn_diff = float(np.max(np.abs(attn - attn_t)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": bool(out_diff <= tol * max(1.0, float(np.max(np.abs(out_t)))) and attn_diff <= tol),
    }
