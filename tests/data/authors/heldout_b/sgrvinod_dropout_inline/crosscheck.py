# Modelled on sgrvinod/a-PyTorch-Tutorial-to-Transformers (the same student): written in that style
# for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal d_model")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    d_model = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().numpy()
    cast_queries = in_proj[:d_model].T
    cast_keys = in_proj[d_model : 2 * d_model].T
    cast_values = in_proj[2 * d_model :].T
    cast_output = mha.out_proj.weight.detach().numpy().T
    return cast_queries, cast_keys, cast_values, cast_output


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn = attn[0].double().numpy()
    sequences, attention_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(sequences - out)))
    w_diff = float(np.max(np.abs(attention_weights - attn)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
