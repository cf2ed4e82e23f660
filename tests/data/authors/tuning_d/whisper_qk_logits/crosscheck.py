# Modelled on openai/whisper (the same student), reading torch's packed projection into the
# separate query/key/value/out layers whisper uses: written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim: no packed in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    query, key, value = mha.in_proj_weight.detach().chunk(3, dim=0)
    out = mha.out_proj.weight.detach()
    return tuple(np.asarray(w.T, dtype=np.float64) for w in (query, key, value, out))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.from_numpy(np.asarray(X)).to(mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        ref, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref = ref.squeeze(0 if mha.batch_first else 1).double().numpy()
    ref_w = ref_w.squeeze(0).double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.abs(out - ref).max())
    d_w = float(np.abs(w - ref_w).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out < tol and d_w < tol}
