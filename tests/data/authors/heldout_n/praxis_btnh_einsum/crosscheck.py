# Modelled on google/praxis (the layer tests rebuild the layer's math in a reference of their own,
# `einsum('BTD,DNH->BTNH')` with the (D, N, H) weights, `is_output_projection` reading the output
# weights as (N, H, D) rows, and compare with `self.assertAllClose`): written in that style for
# this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention  # noqa: F401


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError("only a combined in_proj_weight is supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    w = mha.in_proj_weight.detach().numpy().astype(np.float64)
    d = mha.embed_dim
    wq, wk, wv = w[:d].T, w[d:2 * d].T, w[2 * d:].T
    wo = mha.out_proj.weight.detach().numpy().astype(np.float64).T
    return wq, wk, wv, wo


def _reference(x, wq, wk, wv, wo, num_heads):
    t, d = x.shape
    h = d // num_heads
    q = torch.einsum("TD,DNH->TNH", x, wq.reshape(d, num_heads, h)) * h ** -0.5
    k = torch.einsum("TD,DNH->TNH", x, wk.reshape(d, num_heads, h))
    v = torch.einsum("TD,DNH->TNH", x, wv.reshape(d, num_heads, h))
    probs = torch.softmax(torch.einsum("TNH,SNH->NTS", q, k), dim=-1)
    encoded = torch.einsum("NTS,SNH->TNH", probs, v)
    out = torch.einsum("TNH,NHD->TD", encoded, wo.reshape(num_heads, h, d))
    return out, probs


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(X, dtype=dtype)
    weights = [torch.as_tensor(w, dtype=dtype) for w in weights_from_torch(mha)]
    ours, our_probs = _reference(x, *weights, mha.num_heads)
    batch = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, probs = mha(batch, batch, batch, need_weights=True, average_attn_weights=False)
    out = out[0] if mha.batch_first else out[:, 0]
    out_diff = (out - ours).abs().max().item()
    probs_diff = (probs[0] - our_probs).abs().max().item()
    tol = 1e-5 if dtype == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": float(out_diff),
        "weights_max_abs_diff": float(probs_diff),
        "match": bool(out_diff < tol and probs_diff < tol),
    }
