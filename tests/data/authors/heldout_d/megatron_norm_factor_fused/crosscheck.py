# Modelled on NVIDIA/Megatron-LM (the same student): a checkpoint converter's view of the fused
# query_key_value weight, [np, 3, hn, h] per head: written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("expected a fused query_key_value weight")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("add_bias_linear must be False")
    h = mha.embed_dim
    np_ = mha.num_heads
    hn = h // np_
    qkv = mha.in_proj_weight.detach().to(torch.float64).numpy()
    # [3h, h] -> [np, 3, hn, h]: each head's query, key and value rows together
    qkv = qkv.reshape(np_, 3, hn, h)
    wq = qkv[:, 0].reshape(h, h)
    wk = qkv[:, 1].reshape(h, h)
    wv = qkv[:, 2].reshape(h, h)
    wo = mha.out_proj.weight.detach().to(torch.float64).numpy()
    return wq.T, wk.T, wv.T, wo.T


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(X, dtype=dtype)
    # [s, b, h]
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        output, probs = mha(hidden_states, hidden_states, hidden_states,
                            need_weights=True, average_attn_weights=False)
    output = (output[0] if mha.batch_first else output[:, 0]).to(torch.float64).numpy()
    probs = probs[0].to(torch.float64).numpy()
    mine, mine_probs = multi_head_attention(np.asarray(X, np.float64), *weights_from_torch(mha),
                                            mha.num_heads)
    out_diff = float(np.abs(mine - output).max())
    probs_diff = float(np.abs(mine_probs - probs).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": probs_diff,
            "match": out_diff <= tol and probs_diff <= tol}
