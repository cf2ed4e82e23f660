# Modelled on soskek/attention_is_all_you_need (Chainer): `chainer.using_config('train', False)`,
# `xp.asarray`, `.array` to leave the graph, `chainer.testing.assert_allclose`: written in that
# style for this test corpus (the module under test is a torch one), not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("biases are not supported (nobias=True only)")
    W = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    # F.split_axis(W, 3, axis=0): q, k, v
    W_Q, W_K, W_V = np.split(W, 3, axis=0)
    W_O = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64)
    return W_Q.T.copy(), W_K.T.copy(), W_V.T.copy(), W_O.T.copy()


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    mha.eval()
    with torch.no_grad():
        y, A = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y = (y[0] if mha.batch_first else y[:, 0]).double().numpy()
    A = A[0].double().numpy()
    my_y, my_A = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                      mha.num_heads)
    dy = float(np.abs(y - my_y).max())
    dA = float(np.abs(A - my_A).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    size = max(1.0, float(np.abs(y).max()))
    return {"output_max_abs_diff": dy, "weights_max_abs_diff": dA,
            "match": bool(dy <= atol * size and dA <= atol)}
