# Modelled on huggingface/transformers (the conversion scripts' state_dict renaming and
# slicing, e.g. `in_proj_weight[:dim, :]`, `[dim : dim * 2, :]`, `[-dim:, :]`; the model tests'
# `torch.allclose(..., atol=1e-4)` on float32 and tighter checks on float64): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim or mha.in_proj_weight is None:
        raise ValueError(f"kdim ({mha.kdim}) and vdim ({mha.vdim}) must equal embed_dim "
                         f"({mha.embed_dim})")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv=True is not supported")
    dim = mha.embed_dim
    state_dict = {k: v.detach().cpu().to(torch.float64) for k, v in mha.state_dict().items()}
    in_proj_weight = state_dict["in_proj_weight"]
    q_proj = in_proj_weight[:dim, :]
    k_proj = in_proj_weight[dim : dim * 2, :]
    v_proj = in_proj_weight[-dim:, :]
    o_proj = state_dict["out_proj.weight"]
    # nn.Linear computes x @ W.T
    return tuple(w.T.contiguous().numpy() for w in (q_proj, k_proj, v_proj, o_proj))


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        expected, expected_weights = mha(hidden_states, hidden_states, hidden_states,
                                         need_weights=True, average_attn_weights=False)
    expected = (expected[0] if mha.batch_first else expected[:, 0]).to(torch.float64).numpy()
    expected_weights = expected_weights[0].to(torch.float64).numpy()

    out, weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                        *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(out - expected)))
    weights_diff = float(np.max(np.abs(weights - expected_weights)))
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    size = max(1.0, float(np.max(np.abs(expected))))
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": bool(output_diff <= atol * size and weights_diff <= atol),
    }
