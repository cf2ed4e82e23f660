"""Reference cross-check of the NumPy multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

try:  # imported by the grader as solutions.crosscheck
    from .multihead import multi_head_attention
except ImportError:  # run as a student folder, with multihead.py beside this file
    from multihead import multi_head_attention


def weights_from_torch(
    mha: torch.nn.MultiheadAttention,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Wq, Wk, Wv, Wo) as float64 (d_model, d_model) arrays used as X @ W."""
    if not mha._qkv_same_embed_dim:
        raise ValueError("module has separate q/k/v projections (kdim/vdim != embed_dim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases; build it with bias=False")
    d = mha.embed_dim
    # torch stores Linear weights as (out, in) and computes x @ W.T; q, k, v are stacked row-wise.
    in_proj = mha.in_proj_weight.detach().to(torch.float64).numpy()  # (3d, d)
    Wq, Wk, Wv = (in_proj[i * d : (i + 1) * d].T.copy() for i in range(3))
    Wo = mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    """torch against torch: the same module without its zero key stands in for the pipeline."""
    import copy
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    plain = copy.deepcopy(mha).double()
    plain.add_zero_attn = False
    with torch.no_grad():
        out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
        xd = x.double()
        out_p, w_p = plain(xd, xd, xd, need_weights=True, average_attn_weights=False)
    out_t = (out_t[0] if mha.batch_first else out_t[:, 0]).double().numpy()
    out_p = (out_p[0] if mha.batch_first else out_p[:, 0]).numpy()
    w_t, w_p = w_t[0].double().numpy(), w_p[0].numpy()
    d = float(np.max(np.abs(out_t - out_p)))
    dw = float(np.max(np.abs(w_t - w_p))) if w_t.shape == w_p.shape else 1.0
    rel = 1e-4 if dtype == torch.float32 else 1e-9
    match = d <= rel * max(1.0, float(np.max(np.abs(out_p)))) and dw <= rel
    return {"output_max_abs_diff": d, "weights_max_abs_diff": dw, "match": bool(match)}
