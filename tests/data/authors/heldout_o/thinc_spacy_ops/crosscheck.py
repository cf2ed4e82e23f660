# Modelled on explosion/thinc (`thinc.api.PyTorchWrapper` and `torch2xp` / `xp2torch` to move
# arrays between torch and the ops' arrays, its tests' `numpy.testing.assert_allclose`): written
# in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def torch2xp(t):
    return t.detach().cpu().numpy()


def xp2torch(a, dtype):
    return torch.from_numpy(np.ascontiguousarray(a)).to(dtype)


def weights_from_torch(mha):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("kdim and vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("modules with biases are not supported")
    nO = mha.embed_dim
    W = torch2xp(mha.in_proj_weight).astype("float64")
    Wq, Wk, Wv = W[:nO].T, W[nO:2 * nO].T, W[2 * nO:].T
    Wo = torch2xp(mha.out_proj.weight).astype("float64").T
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    Xt = xp2torch(X, dtype)
    Xt = Xt.unsqueeze(0) if mha.batch_first else Xt.unsqueeze(1)
    with torch.no_grad():
        Yt, At = mha(Xt, Xt, Xt, need_weights=True, average_attn_weights=False)
    Y_torch = torch2xp(Yt[0] if mha.batch_first else Yt[:, 0]).astype("float64")
    A_torch = torch2xp(At[0]).astype("float64")
    Y, A = multi_head_attention(np.asarray(X, dtype="float64"), *weights_from_torch(mha),
                                mha.num_heads)
    dY = float(np.abs(Y - Y_torch).max())
    dA = float(np.abs(A - A_torch).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": dY, "weights_max_abs_diff": dA,
            "match": dY <= tol * max(1.0, float(np.abs(Y_torch).max())) and dA <= tol}
