# Modelled on TensorTonic-style NumPy solutions (batch-first arrays everywhere): written in that
# style for this test corpus, not copied. The adapter adds the batch axis in front whatever the
# module's batch_first says.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("bias must be False")
    W_q, W_k, W_v = np.split(mha.in_proj_weight.detach().double().numpy(), 3, axis=0)
    W_o = mha.out_proj.weight.detach().double().numpy()
    return W_q.T, W_k.T, W_v.T, W_o.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    batch = torch.tensor(X[None], dtype=mha.in_proj_weight.dtype)  # (batch_size, seq_len, d_model)
    with torch.no_grad():
        out, w = mha(batch, batch, batch, need_weights=True, average_attn_weights=False)
    out = out[0].double().numpy()
    w = w[0].double().numpy()
    my_out, my_w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                        mha.num_heads)
    out_diff = float(np.max(np.abs(out - my_out)))
    w_diff = float(np.max(np.abs(w - my_w)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
