# Modelled on openai/guided-diffusion (unet.py's `import torch as th`, AttentionBlock's 1x1 convs
# whose weights are [out x in x 1], fp16_util.py's `convert_module_to_f16` / `_f32` and the
# `param.detach().float()` copies): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch as th

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("the module has biases")
    # like the qkv conv: [3C x C] (out x in), applied as x @ W.T
    qkv = mha.in_proj_weight.detach().to(th.float64)
    q, k, v = qkv.chunk(3, dim=0)
    proj_out = mha.out_proj.weight.detach().to(th.float64)
    return tuple(w.T.contiguous().cpu().numpy() for w in (q, k, v, proj_out))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = th.tensor(np.asarray(X), dtype=dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with th.no_grad():
        h, weight = mha(x, x, x, need_weights=True, average_attn_weights=False)
    h = (h[0] if mha.batch_first else h[:, 0]).to(th.float64).numpy()
    weight = weight[0].to(th.float64).numpy()

    ours, our_weight = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(h - ours).max())
    weight_diff = float(np.abs(weight - our_weight).max())
    # fp32 keeps ~7 digits, fp64 ~16
    tol = 1e-4 if dtype == th.float32 else 1e-9
    size = max(1.0, float(np.abs(ours).max()))
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": weight_diff,
        "match": bool(out_diff <= tol * size and weight_diff <= tol),
    }
