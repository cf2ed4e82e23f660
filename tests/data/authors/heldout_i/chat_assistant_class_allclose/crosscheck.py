# Modelled on chat-assistant answers (the same student): "Now let's verify against PyTorch":
# weights copied with `.data.numpy()`, `attn_output, attn_weights = mha(x, x, x)` and
# `np.abs(ours - theirs).max()`: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    # Make sure the module is the simple case we support
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("Module must be created with bias=False")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")

    d_model = mha.embed_dim
    # in_proj_weight is (3*d_model, d_model): [W_q; W_k; W_v]
    in_proj = mha.in_proj_weight.data.numpy()
    W_q = in_proj[:d_model, :].T
    W_k = in_proj[d_model:2 * d_model, :].T
    W_v = in_proj[2 * d_model:, :].T
    W_o = mha.out_proj.weight.data.numpy().T
    return W_q, W_k, W_v, W_o


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    # Step 1: PyTorch forward pass
    x = torch.tensor(X, dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        attn_output, attn_weights = mha(x, x, x)
    attn_output = attn_output[0] if mha.batch_first else attn_output[:, 0]
    torch_out = attn_output.numpy()
    torch_weights = attn_weights.numpy()

    # Step 2: our implementation
    W_q, W_k, W_v, W_o = weights_from_torch(mha)
    our_out, our_weights = multi_head_attention(X, W_q, W_k, W_v, W_o, mha.num_heads)

    # Step 3: compare
    output_diff = float(np.abs(our_out - torch_out).max())
    weights_diff = float(np.abs(our_weights - torch_weights).max())
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": output_diff < tol and weights_diff < tol,
    }
