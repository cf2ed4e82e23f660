# Modelled on openai/gpt-2, src/model.py (the same student): conv1d's w is [nx, nf] and computes
# x @ w, so torch's (out, in) Linear weights are transposed into that layout, the way GPT-2
# checkpoints are converted: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("c_attn must be one [nx, 3 * nx] projection: kdim/vdim not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    w = mha.in_proj_weight.detach().cpu().double().numpy()  # [3 * nx, nx]
    c_attn = w.T  # [nx, 3 * nx]
    wq, wk, wv = np.split(c_attn, 3, axis=1)
    c_proj = mha.out_proj.weight.detach().cpu().double().numpy().T
    return wq, wk, wv, c_proj


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.array(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        a, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    a = (a[0] if mha.batch_first else a[:, 0]).double().numpy()
    w = w[0].double().numpy()
    my_a, my_w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                      mha.num_heads)
    out_diff = float(np.max(np.abs(my_a - a)))
    w_diff = float(np.max(np.abs(my_w - w)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff <= tol and w_diff <= tol}
