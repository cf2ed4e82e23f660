# Modelled on graykode/nlp-tutorial, 5-1.Transformer/Transformer-Torch.py (the same student):
# weights pulled out of the Linear layers with .data and used as x @ W.T, attention maps taken
# per head as in showgraph(): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim differ from embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("module has add_bias_kv")
    d_model = mha.embed_dim
    W = mha.in_proj_weight.data.double().numpy()
    W_Q = W[:d_model].T.copy()
    W_K = W[d_model:2 * d_model].T.copy()
    W_V = W[2 * d_model:].T.copy()
    W_O = mha.out_proj.weight.data.double().numpy().T.copy()
    return W_Q, W_K, W_V, W_O


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.out_proj.weight.dtype
    enc_inputs = torch.tensor(X, dtype=dtype)
    enc_inputs = enc_inputs.unsqueeze(0) if mha.batch_first else enc_inputs.unsqueeze(1)
    with torch.no_grad():
        out, attn = mha(enc_inputs, enc_inputs, enc_inputs, need_weights=True,
                        average_attn_weights=False)
    out = out.squeeze(0) if mha.batch_first else out.squeeze(1)
    out = out.double().numpy()
    attn = attn.squeeze(0).double().numpy()  # [n_heads x len_q x len_k]

    my_out, my_attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                           *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_out - out).max())
    attn_diff = float(np.abs(my_attn - attn).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff,
            "match": bool(out_diff < tol and attn_diff < tol)}
