# Modelled on huggingface/transformers' T5 (the same student; its convert_t5 scripts read kernels
# as transposed arrays): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("T5 layers have no bias: build the module with bias=False")
    inner_dim = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64).numpy()
    q = w[:inner_dim].T.copy()
    k = w[inner_dim : 2 * inner_dim].T.copy()
    v = w[2 * inner_dim :].T.copy()
    o = mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()
    return q, k, v, o


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(X, dtype=dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        out, attn_weights = mha(
            hidden_states, hidden_states, hidden_states,
            need_weights=True, average_attn_weights=False,
        )
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    attn_weights = attn_weights[0].to(torch.float64).numpy()
    ours, our_weights = multi_head_attention(
        np.asarray(X, np.float64), *weights_from_torch(mha), mha.num_heads
    )
    out_diff = float(np.max(np.abs(ours - out)))
    w_diff = float(np.max(np.abs(our_weights - attn_weights)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    match = out_diff <= tol * max(1.0, float(np.max(np.abs(out)))) and w_diff <= tol
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff, "match": bool(match)}
