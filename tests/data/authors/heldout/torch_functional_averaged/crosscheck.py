# Modelled on pytorch/pytorch's own defaults (need_weights=True and average_attn_weights=True in
# nn.MultiheadAttention.forward): written in that style for this test corpus, not copied. The
# student compares like with like: torch's averaged weights against their own averaged ones.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("in_proj_bias / out_proj.bias / bias_k must be None")
    w_q, w_k, w_v = mha.in_proj_weight.detach().to(torch.float64).chunk(3)
    w_o = mha.out_proj.weight.detach().to(torch.float64)
    return w_q.T.numpy(), w_k.T.numpy(), w_v.T.numpy(), w_o.T.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    query = torch.as_tensor(np.asarray(X), dtype=mha.in_proj_weight.dtype)
    query = query.unsqueeze(0) if mha.batch_first else query.unsqueeze(1)
    with torch.no_grad():
        attn_output, attn_output_weights = mha(query, query, query)
    attn_output = (attn_output[0] if mha.batch_first else attn_output[:, 0]).double().numpy()
    attn_output_weights = attn_output_weights[0].double().numpy()  # (tgt_len, src_len)
    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(out - attn_output)))
    w_diff = float(np.max(np.abs(weights - attn_output_weights)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
