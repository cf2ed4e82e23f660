# Modelled on meta-llama/llama (the same student): torch tensors handled as llama's generation
# code does, ending with output.float(): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("llama layers have no biases")
    dim = mha.embed_dim
    w = mha.in_proj_weight.detach().double()
    wq, wk, wv = w[:dim], w[dim : 2 * dim], w[2 * dim :]
    wo = mha.out_proj.weight.detach().double()
    return tuple(t.T.numpy() for t in (wq, wk, wv, wo))


@torch.inference_mode()
def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.out_proj.weight.dtype
    h = torch.as_tensor(X, dtype=dtype)
    h = h.unsqueeze(0) if mha.batch_first else h.unsqueeze(1)
    output, attn = mha(h, h, h, need_weights=True, average_attn_weights=False)
    output = output[0] if mha.batch_first else output[:, 0]
    output = output.float().numpy()  # return output.float()
    attn = attn[0].float().numpy()
    out, weights = multi_head_attention(X.astype(np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(out - output).max())
    w_diff = float(np.abs(weights - attn).max())
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": out_diff < tol and w_diff < tol}
