# Modelled on phlippe/uvadlc_notebooks tutorial 6 (its [Batch, SeqLen, Dims] habit: batch in front):
# written in that style for this test corpus, not copied. The student reads batch_first backwards.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only modules without bias")
    q_w, k_w, v_w = mha.in_proj_weight.detach().double().chunk(3, dim=0)
    o_w = mha.out_proj.weight.detach().double()
    return q_w.numpy().T, k_w.numpy().T, v_w.numpy().T, o_w.numpy().T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    # [Batch, SeqLen, Dims] if batch_first, else [SeqLen, Batch, Dims]
    x = x[:, None, :] if mha.batch_first else x[None, :, :]
    with torch.no_grad():
        o, attention = mha(x, x, x, need_weights=True, average_attn_weights=False)
    o = (o[:, 0] if mha.batch_first else o[0]).double().numpy()
    attention = attention[0].double().numpy()
    my_o, my_attention = multi_head_attention(np.asarray(X, dtype=np.float64),
                                              *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(o - my_o).max())
    w_diff = float(np.abs(attention - my_attention).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff < tol and w_diff < tol)}
