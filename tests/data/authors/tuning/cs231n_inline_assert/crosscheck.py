# Modelled on the CS231n assignment notebooks' checks (rel_error against expected values, looking
# for errors around 1e-8 or less): written in that style for this test corpus, not copied. The
# student keeps the notebook's 1e-8 threshold for every module.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    E = mha.embed_dim
    W = mha.in_proj_weight.detach().double().numpy()
    Wq, Wk, Wv = W[:E].T, W[E : 2 * E].T, W[2 * E :].T
    Wo = mha.out_proj.weight.detach().double().numpy().T
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        expected, expected_attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    expected = (expected[0] if mha.batch_first else expected[:, 0]).double().numpy()
    expected_attn = expected_attn[0].double().numpy()
    out, attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                     mha.num_heads)
    out_err = float(np.max(np.abs(out - expected)))
    attn_err = float(np.max(np.abs(attn - expected_attn)))
    # "You should see errors around e-8 or less"
    return {"output_max_abs_diff": out_err, "weights_max_abs_diff": attn_err,
            "match": out_err < 1e-8 and attn_err < 1e-8}
