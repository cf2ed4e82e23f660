# Modelled on tinygrad (the same student): tinygrad's nn.state / torch_load keep a checkpoint's
# weights in float32, its default dtype, and its Tensor.numpy(): written in that style for this
# test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("expected a packed in_proj_weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("expected bias=False")
    state = {k: v.detach().float().numpy() for k, v in mha.state_dict().items()}
    wq, wk, wv = np.split(state["in_proj_weight"], 3)
    return wq.T, wk.T, wv.T, state["out_proj.weight"].T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.from_numpy(np.asarray(X)).to(mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        ret, w_ref = mha(x, x, x)
    ret = (ret[0] if mha.batch_first else ret[:, 0]).double().numpy()
    w_ref = w_ref[0].double().numpy()
    out, w = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads)
    d_out = float(np.abs(out - ret).max())
    d_w = float(np.abs(w - w_ref).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_w, "match": d_out < tol and d_w < tol}
