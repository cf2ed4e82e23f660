# Modelled on CMU 11-868 LLM Systems, assignment 2 (the same student): the assignment's tests
# build torch.nn.MultiheadAttention(n_embd, n_head, batch_first=True), copy in_proj_weight into
# the q/k/v projections as weights.T, and feed (batch_size, seq_len, n_embd) everywhere:
# written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias must be False")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv must be False")
    n_embd = mha.embed_dim
    w_qkv = mha.in_proj_weight.detach().numpy().astype(np.float64)
    w_q = w_qkv[:n_embd].T.copy()
    w_k = w_qkv[n_embd:2 * n_embd].T.copy()
    w_v = w_qkv[2 * n_embd:].T.copy()
    w_out = mha.out_proj.weight.detach().numpy().astype(np.float64).T.copy()
    return w_q, w_k, w_v, w_out


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype).unsqueeze(0)  # (batch_size, seq_len, n_embd)
    with torch.no_grad():
        result_, attn_ = mha(x, x, x, need_weights=True, average_attn_weights=False)
    result_ = result_[0].numpy().astype(np.float64)
    attn_ = attn_[0].numpy().astype(np.float64)

    result, attn = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(result - result_).max())
    attn_diff = float(np.abs(attn - attn_).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": attn_diff,
            "match": out_diff < tol and attn_diff < tol}
