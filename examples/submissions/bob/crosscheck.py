"""Cross-check of the NumPy multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

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


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    """Run X through the module and through multi_head_attention; report the largest differences."""
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = (
        x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    )  # one sequence: (1, n, d) or (n, 1, d)
    with torch.no_grad():
        out_t, w_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_t = (out_t[0] if mha.batch_first else out_t[:, 0]).to(torch.float64).numpy()  # (n, d)
    w_t = w_t[0].to(torch.float64).numpy()  # (num_heads, n, n) whatever batch_first is

    out, weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(out - out_t)))
    w_diff = float(np.max(np.abs(weights - w_t)))
    # float32 keeps ~7 significant digits: allow error relative to the output's scale.
    rel = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, float(np.max(np.abs(out))))
    match = out_diff <= rel * scale and w_diff <= rel
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
