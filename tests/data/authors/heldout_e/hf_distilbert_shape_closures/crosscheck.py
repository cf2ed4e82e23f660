# Modelled on huggingface/transformers, models/distilbert/modeling_distilbert.py (the same
# student): q_lin / k_lin / v_lin / out_lin read out of one module, the way the TF/PyTorch
# conversion code copies them: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must equal embed_dim (q_lin, k_lin, v_lin share one weight)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("q_lin, k_lin, v_lin and out_lin must have no bias")
    q_lin, k_lin, v_lin = mha.in_proj_weight.detach().chunk(3, dim=0)
    out_lin = mha.out_proj.weight.detach()
    return tuple(w.T.double().numpy() for w in (q_lin, k_lin, v_lin, out_lin))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.out_proj.weight.dtype
    query = torch.from_numpy(np.asarray(X)).to(dtype)
    query = query.unsqueeze(0) if mha.batch_first else query.unsqueeze(1)  # bs = 1
    with torch.no_grad():
        context, weights = mha(query, query, query, need_weights=True, average_attn_weights=False)
    context = (context[0] if mha.batch_first else context[:, 0]).double().numpy()
    weights = weights[0].double().numpy()  # (n_heads, q_length, k_length)

    my_context, my_weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    output_max_abs_diff = float(np.abs(my_context - context).max())
    weights_max_abs_diff = float(np.abs(my_weights - weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": bool(output_max_abs_diff < tol and weights_max_abs_diff < tol),
    }
