# Modelled on the answers a chat assistant (ChatGPT) gives to "compare my NumPy attention with
# torch.nn.MultiheadAttention" (the same student): written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    """Extract (Wq, Wk, Wv, Wo) as float64 NumPy arrays for X @ W."""
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError("Separate q/k/v projection weights are not supported.")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("Modules with bias are not supported.")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported.")
    d_model = mha.embed_dim
    W_in = mha.in_proj_weight.detach().cpu().to(torch.float64).numpy()
    W_q = W_in[:d_model, :].T
    W_k = W_in[d_model : 2 * d_model, :].T
    W_v = W_in[2 * d_model :, :].T
    W_o = mha.out_proj.weight.detach().cpu().to(torch.float64).numpy().T
    return W_q, W_k, W_v, W_o


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    """Compare the NumPy implementation with PyTorch."""
    dtype = mha.in_proj_weight.dtype
    x = torch.tensor(X, dtype=dtype)
    # Add the batch dimension in the right place
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    mha.eval()
    with torch.no_grad():
        torch_out, torch_weights = mha(x, x, x, need_weights=True, average_attn_weights=False)
    torch_out = torch_out.squeeze(0) if mha.batch_first else torch_out.squeeze(1)
    torch_out = torch_out.to(torch.float64).numpy()
    torch_weights = torch_weights.squeeze(0).to(torch.float64).numpy()

    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    np_out, np_weights = multi_head_attention(np.asarray(X, dtype=np.float64), Wq, Wk, Wv, Wo, mha.num_heads)

    output_diff = float(np.max(np.abs(np_out - torch_out)))
    weights_diff = float(np.max(np.abs(np_weights - torch_weights)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, float(np.max(np.abs(torch_out))))
    match = output_diff <= tol * scale and weights_diff <= tol
    return {"output_max_abs_diff": output_diff, "weights_max_abs_diff": weights_diff, "match": bool(match)}
