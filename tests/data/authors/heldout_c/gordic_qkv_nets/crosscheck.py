# Modelled on gordicaleksa/pytorch-original-transformer (the same student): written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError("Expected a packed in_proj_weight (kdim == vdim == embed_dim).")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("Expected a module built with bias=False.")
    model_dimension = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().double().numpy()
    qkv_nets = [in_proj[i * model_dimension : (i + 1) * model_dimension].T.copy() for i in range(3)]
    out_projection_net = mha.out_proj.weight.detach().double().numpy().T.copy()
    return (*qkv_nets, out_projection_net)


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    src = torch.tensor(np.asarray(X), dtype=dtype)
    src = src.unsqueeze(0) if mha.batch_first else src.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_weights = mha(src, src, src, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).double().numpy()
    ref_weights = ref_weights[0].double().numpy()

    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(out - ref_out)))
    weights_diff = float(np.max(np.abs(weights - ref_weights)))
    tolerance = 1e-4 if dtype == torch.float32 else 1e-9
    match = output_diff <= tolerance * max(1.0, float(np.max(np.abs(out)))) and weights_diff <= tolerance
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff, "match": bool(match)}
