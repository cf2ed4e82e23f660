# Modelled on huggingface/transformers, models/reformer/modeling_reformer.py (the same student):
# weights read as nn.Linear weights (out, in) applied as x @ W.T, the module run in eval mode
# under torch.no_grad(): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("a module with biases is not supported")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv is not supported")
    hidden_size = mha.embed_dim
    with torch.no_grad():
        w_q, w_k, w_v = mha.in_proj_weight.double().split(hidden_size, dim=0)
        w_o = mha.out_proj.weight.double()
    return tuple(w.t().contiguous().numpy() for w in (w_q, w_k, w_v, w_o))


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    mha.eval()
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states.unsqueeze(0) if mha.batch_first else hidden_states.unsqueeze(1)
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    probs = probs[0].double().numpy()

    my_out, my_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                            *weights_from_torch(mha), mha.num_heads)
    out_diff = float(np.abs(my_out - out).max())
    probs_diff = float(np.abs(my_probs - probs).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": probs_diff,
            "match": out_diff < tol and probs_diff < tol}
