# Modelled on PaddlePaddle/Paddle, python/paddle/nn/layer/transformer.py and
# python/paddle/nn/layer/common.py (the same student): a Linear's weight is [in_features,
# out_features] and computes x @ W, and MultiHeadAttention takes [batch_size, seq_len, embed_dim]:
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must be equal to embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias_attr must be False")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().numpy().astype(np.float64)
    q_weight = in_proj[0:embed_dim, :]
    k_weight = in_proj[embed_dim : 2 * embed_dim, :]
    v_weight = in_proj[2 * embed_dim : 3 * embed_dim, :]
    out_weight = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return q_weight, k_weight, v_weight, out_weight


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    query = torch.tensor(np.asarray(X), dtype=dtype).unsqueeze(0)  # [batch_size, seq_len, embed_dim]
    with torch.no_grad():
        out, weights = mha(query, query, query, need_weights=True, average_attn_weights=False)
    out = out[0].numpy().astype(np.float64)
    weights = weights[0].numpy().astype(np.float64)

    my_out, my_weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                              *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(my_out - out)))
    weights_diff = float(np.max(np.abs(my_weights - weights)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff,
            "match": bool(output_diff <= tol and weights_diff <= tol)}
