# Modelled on UMich EECS 498-007/598-005, assignment 5 (the same student): the notebook's
# check `print('error:', rel_error(y_pred, y_expected))`, "should be less than 1e-5", used as
# the difference to report: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention, rel_error


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim different from embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("module has add_bias_kv")
    D = mha.embed_dim
    W = mha.in_proj_weight.detach().to(torch.float64)
    Wq = W[:D].t().numpy().copy()
    Wk = W[D:2 * D].t().numpy().copy()
    Wv = W[2 * D:].t().numpy().copy()
    Wo = mha.out_proj.weight.detach().to(torch.float64).t().numpy().copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    x = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        y_expected, w_expected = mha(x, x, x, need_weights=True, average_attn_weights=False)
    y_expected = (y_expected[0] if mha.batch_first else y_expected[:, 0]).double().numpy()
    w_expected = w_expected[0].double().numpy()

    y_pred, w_pred = multi_head_attention(np.asarray(X, dtype=np.float64),
                                          *weights_from_torch(mha), mha.num_heads)
    y_err = float(rel_error(y_pred, y_expected))
    w_err = float(rel_error(w_pred, w_expected))
    return {"output_max_abs_diff": y_err, "weights_max_abs_diff": w_err,
            "match": y_err < 1e-5 and w_err < 1e-5}
