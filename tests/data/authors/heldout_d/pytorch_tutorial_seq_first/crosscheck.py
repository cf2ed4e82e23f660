# Modelled on the PyTorch tutorial "Language Modeling with nn.Transformer and torchtext" (the
# same student): data batched as [seq_len, batch_size, d_model], the tutorial's layout: written
# in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    d_model = mha.embed_dim
    w_q, w_k, w_v = mha.in_proj_weight.detach().to(torch.float64).chunk(3)
    w_o = mha.out_proj.weight.detach().to(torch.float64)
    assert w_q.shape == (d_model, d_model)
    return w_q.T.numpy(), w_k.T.numpy(), w_v.T.numpy(), w_o.T.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    src = torch.tensor(X, dtype=dtype).unsqueeze(1)  # [seq_len, batch_size, d_model]
    with torch.no_grad():
        output, weights = mha(src, src, src, need_weights=True, average_attn_weights=False)
    output = output[:, 0].to(torch.float64).numpy()
    weights = weights[0].to(torch.float64).numpy()
    mine, mine_w = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(mine - output).max())
    w_diff = float(np.abs(mine_w - weights).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
