# Modelled on fastai/course22p2, nbs/27_attention.ipynb (the same student): cp_parms-style copying
# of the module's weights, and the notebook's comparison nm = nn.MultiheadAttention(...);
# nmx, nmw = nm(t, t, t) called with torch's defaults: written in that style for this test
# corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("need a packed in_proj_weight (kdim == vdim == embed_dim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("need a module without biases")
    sq, sk, sv = mha.in_proj_weight.detach().double().chunk(3)
    proj = mha.out_proj.weight.detach().double()
    return [w.T.numpy().copy() for w in (sq, sk, sv, proj)]


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dt = mha.in_proj_weight.dtype
    t = torch.tensor(np.asarray(X), dtype=dt)
    t = t[None] if mha.batch_first else t[:, None]
    with torch.no_grad():
        nmx, nmw = mha(t, t, t)
    nmx = (nmx[0] if mha.batch_first else nmx[:, 0]).double().numpy()
    nmw = nmw[0].double().numpy()
    x, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                mha.num_heads)
    out_diff = float(np.abs(x - nmx).max())
    w_diff = float(np.abs(w - nmw).max())
    tol = 1e-4 if dt == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
