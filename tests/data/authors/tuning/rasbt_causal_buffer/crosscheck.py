# Modelled on rasbt/LLMs-from-scratch (ch03's comparison of MultiHeadAttention implementations,
# calling nn.MultiheadAttention with need_weights and leaving the rest at its defaults): written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("qkv_bias must be False")
    W_query, W_key, W_value = mha.in_proj_weight.detach().to(torch.float64).chunk(3)
    out_proj = mha.out_proj.weight.detach().to(torch.float64)
    return W_query.T.numpy(), W_key.T.numpy(), W_value.T.numpy(), out_proj.T.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    batch = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    batch = batch.unsqueeze(0) if mha.batch_first else batch.unsqueeze(1)
    with torch.no_grad():
        out, attn_weights = mha(batch, batch, batch, need_weights=True)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    attn_weights = attn_weights[0].double().numpy()
    my_out, my_weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                              *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(out - my_out)))
    w_diff = float(np.max(np.abs(attn_weights - my_weights)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
