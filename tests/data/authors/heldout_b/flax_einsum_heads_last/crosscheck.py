# Modelled on google/flax (the same student; Flax kernels are (in, out), torch's Linear weights
# (out, in)): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("qkv_features must be the same for query, key and value")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias=False is required")
    kernel = mha.in_proj_weight.detach().to(torch.float64).numpy()
    q_kernel, k_kernel, v_kernel = (np.ascontiguousarray(b.T) for b in np.split(kernel, 3))
    out_kernel = np.ascontiguousarray(mha.out_proj.weight.detach().to(torch.float64).numpy().T)
    return q_kernel, k_kernel, v_kernel, out_kernel


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    inputs = torch.as_tensor(np.asarray(X), dtype=dtype)
    batch_axis = 0 if mha.batch_first else 1
    inputs = inputs.unsqueeze(batch_axis)
    with torch.no_grad():
        out, weights = mha(inputs, inputs, inputs, need_weights=True, average_attn_weights=False)
    out = out.squeeze(batch_axis).to(torch.float64).numpy()
    weights = weights[0].to(torch.float64).numpy()
    y, attn_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(y - out)))
    w_diff = float(np.max(np.abs(attn_weights - weights)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
