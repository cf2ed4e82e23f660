# Modelled on srush/Tensor-Puzzles (the same student): in_proj_weight cut into its three blocks
# by one reshape and one transpose of the last two axes, no slicing by hand:
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim differ from embed_dim")
    if any(b is not None for b in (mha.in_proj_bias, mha.out_proj.bias, mha.bias_k, mha.bias_v)):
        raise ValueError("module has biases")
    d = mha.embed_dim
    W = mha.in_proj_weight.detach().double().numpy()
    Wq, Wk, Wv = W.reshape(3, d, d).transpose(0, 2, 1).copy()
    Wo = mha.out_proj.weight.detach().double().numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dt = mha.out_proj.weight.dtype
    x = torch.as_tensor(np.asarray(X)).to(dt).unsqueeze(0 if mha.batch_first else 1)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out.squeeze(0 if mha.batch_first else 1).double().numpy()
    w = w[0].double().numpy()
    mine, mine_w = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    do = float(abs(mine - out).max())
    dw = float(abs(mine_w - w).max())
    tol = 1e-4 if dt == torch.float32 else 1e-8
    return {"output_max_abs_diff": do, "weights_max_abs_diff": dw, "match": do <= tol and dw <= tol}
