# Modelled on huggingface/candle (VarBuilder loading `in_proj_weight` and slicing it with
# `narrow(0, start, len)`, every tensor loaded with `.to_dtype(DType::F32)?`, the tests'
# `(a - b)?.abs()?.max_all()?.to_scalar::<f32>()?`): translated back to Python for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def _narrow(t, dim, start, length):
    return t.narrow(dim, start, length)


def weights_from_torch(mha):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("expected a packed in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("expected bias=false")
    hidden = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float32)  # .to_dtype(DType::F32)?
    wq = _narrow(w, 0, 0, hidden)
    wk = _narrow(w, 0, hidden, hidden)
    wv = _narrow(w, 0, 2 * hidden, hidden)
    wo = mha.out_proj.weight.detach().to(torch.float32)
    return tuple(t.t().numpy().astype(np.float64) for t in (wq, wk, wv, wo))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    xs = torch.as_tensor(X, dtype=dtype)
    xs = xs.unsqueeze(0) if mha.batch_first else xs.unsqueeze(1)
    with torch.no_grad():
        ys, attn = mha(xs, xs, xs, need_weights=True, average_attn_weights=False)
    ys = ys.squeeze(0) if mha.batch_first else ys.squeeze(1)
    ours, our_attn = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    out_diff = (ys.double() - torch.from_numpy(ours)).abs().max().item()
    attn_diff = (attn.squeeze(0).double() - torch.from_numpy(our_attn)).abs().max().item()
    tol = 1e-4 if dtype == torch.float32 else 1e-6
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": out_diff < tol and attn_diff < tol,
    }
