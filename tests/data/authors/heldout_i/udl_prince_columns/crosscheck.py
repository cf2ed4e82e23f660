# Modelled on Simon J.D. Prince, Understanding Deep Learning, notebook 12.2 (the same
# student): the weights written out one matrix at a time, omega (out x in) applied as
# omega @ x, so torch's matrices only need a transpose for rows-as-tokens: written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("the module has biases (beta)")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("the module has add_bias_kv")
    D = mha.embed_dim
    omega = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    omega_q = omega[0:D]
    omega_k = omega[D:2 * D]
    omega_v = omega[2 * D:3 * D]
    omega_c = mha.out_proj.weight.detach().cpu().numpy().astype(np.float64)
    # the book computes omega @ x with x a column; with rows as tokens that is x @ omega.T
    return omega_q.T, omega_k.T, omega_v.T, omega_c.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out_t, att_t = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out_t = out_t[0] if mha.batch_first else out_t[:, 0]
    out_t = out_t.double().numpy()
    att_t = att_t[0].double().numpy()

    out, att = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                    mha.num_heads)
    out_diff = float(np.max(np.abs(out - out_t)))
    att_diff = float(np.max(np.abs(att - att_t)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": att_diff,
            "match": bool(out_diff <= tol and att_diff <= tol)}
