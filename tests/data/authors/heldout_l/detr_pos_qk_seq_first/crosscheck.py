# Modelled on facebookresearch/detr: models/transformer.py (`# flatten NxCxHxW to HWxNxC`,
# sequence-first tensors for nn.MultiheadAttention, `self.self_attn(q, k, value=src)`), the
# attention-visualisation notebook (weights taken from the module's second output, `output[1]`,
# through a forward hook) and the checkpoint surgery people do on `in_proj_weight`: written in
# that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("expected nn.MultiheadAttention(..., bias=False)")
    # in_proj_weight stacks q, k and v
    q_w, k_w, v_w = mha.in_proj_weight.detach().double().chunk(3)
    out_w = mha.out_proj.weight.detach().double()
    return q_w.T.numpy(), k_w.T.numpy(), v_w.T.numpy(), out_w.T.numpy()


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    # flatten NxCxHxW to HWxNxC: one "image" of n tokens, N = 1
    src = torch.as_tensor(np.asarray(X), dtype=dtype).unsqueeze(1)
    with torch.no_grad():
        src2, attn = mha(src, src, value=src)
    src2 = src2[:, 0].double().numpy()  # (HW, C)
    attn = attn[0].double().numpy()  # (HW, HW)

    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    output_max_abs_diff = float(np.abs(out - src2).max())
    weights_max_abs_diff = float(np.abs(weights - attn[None]).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    scale = max(1.0, float(np.abs(src2).max()))
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": bool(output_max_abs_diff <= tol * scale and weights_max_abs_diff <= tol),
    }
