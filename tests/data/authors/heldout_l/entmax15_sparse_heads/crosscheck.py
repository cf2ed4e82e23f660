# Modelled on deep-spin/entmax's tests (entmax/test_root_finding.py, test_losses.py: torch
# tensors in double precision, results compared with `torch.allclose`) and its docstring style:
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    """
    Parameters:
        mha (torch.nn.MultiheadAttention): built with bias=False
    Returns:
        (Wq, Wk, Wv, Wo): float64 arrays used as X @ W
    """
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    W = mha.in_proj_weight.detach().double()
    Wq, Wk, Wv = W.chunk(3, dim=0)
    Wo = mha.out_proj.weight.detach().double()
    return tuple(w.t().contiguous().numpy() for w in (Wq, Wk, Wv, Wo))


def cross_check(mha, X):
    """
    Parameters:
        mha (torch.nn.MultiheadAttention): float32 or float64, either batch_first
        X (ndarray): (n, d_model)
    Returns:
        dict with the largest differences and whether they are within tolerance
    """
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X, dtype=np.float64)).to(dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out.squeeze(0) if mha.batch_first else out.squeeze(1)
    out = out.double().numpy()
    attn = attn.squeeze(0).double().numpy()

    my_out, my_attn = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.abs(out - my_out).max())
    attn_diff = float(np.abs(attn - my_attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, float(np.abs(out).max()))
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": bool(out_diff <= tol * scale and attn_diff <= tol),
    }
