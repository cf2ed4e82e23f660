# Modelled on Kyubyong/transformer (TF1, everything float32: weights read back with
# sess.run / .numpy() in the graph's dtype): written in that style for this test corpus, not
# copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("biases are not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")
    num_units = mha.embed_dim
    W = mha.in_proj_weight.detach().numpy()
    Wq = W[:num_units].T
    Wk = W[num_units:2 * num_units].T
    Wv = W[2 * num_units:].T
    Wo = mha.out_proj.weight.detach().numpy().T
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    inputs = torch.tensor(X, dtype=dtype)
    inputs = inputs.unsqueeze(0) if mha.batch_first else inputs.unsqueeze(1)
    with torch.no_grad():
        enc, attn = mha(inputs, inputs, inputs, need_weights=True, average_attn_weights=False)
    enc = enc[0].numpy() if mha.batch_first else enc[:, 0].numpy()
    attn = attn[0].numpy()
    outputs, weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.max(np.abs(outputs - enc.astype(np.float64))))
    w_diff = float(np.max(np.abs(weights - attn.astype(np.float64))))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
