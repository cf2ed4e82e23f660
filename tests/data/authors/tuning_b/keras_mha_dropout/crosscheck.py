# Modelled on keras-team/keras (the same student; Keras kernels are (in, out), so torch's (out, in)
# weights are transposed): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    d = mha.embed_dim
    kernel = mha.in_proj_weight.detach().cpu().numpy().astype("float64")
    query_kernel = kernel[:d].T
    key_kernel = kernel[d : 2 * d].T
    value_kernel = kernel[2 * d :].T
    output_kernel = mha.out_proj.weight.detach().cpu().numpy().astype("float64").T
    return query_kernel, key_kernel, value_kernel, output_kernel


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    axis = 0 if mha.batch_first else 1
    with torch.no_grad():
        out, scores = mha(
            x.unsqueeze(axis), x.unsqueeze(axis), x.unsqueeze(axis),
            need_weights=True, average_attn_weights=False,
        )
    out = out.squeeze(axis).double().numpy()
    scores = scores[0].double().numpy()
    mine, my_scores = multi_head_attention(
        np.asarray(X, dtype="float64"), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(mine - out)))
    w_diff = float(np.max(np.abs(my_scores - scores)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": w_diff,
        "match": bool(out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol),
    }
