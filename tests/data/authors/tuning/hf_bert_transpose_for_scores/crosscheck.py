# Modelled on huggingface/transformers (output_attentions gives per-head attention maps, so the
# student expects nn.MultiheadAttention's weights to be per head as well and leaves
# average_attn_weights at its default): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim differ from embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("module has biases")
    state_dict = {k: v.detach().to(torch.float64) for k, v in mha.state_dict().items()}
    query, key, value = state_dict["in_proj_weight"].chunk(3)
    dense = state_dict["out_proj.weight"]
    return query.T.numpy(), key.T.numpy(), value.T.numpy(), dense.T.numpy()


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    hidden_states = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        outputs = mha(hidden_states, hidden_states, hidden_states, need_weights=True)
    attn_output = outputs[0][0] if mha.batch_first else outputs[0][:, 0]
    attentions = outputs[1][0]
    out, probs = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                      mha.num_heads)
    out_diff = float(np.abs(out - attn_output.double().numpy()).max())
    w_diff = float(np.abs(probs - attentions.double().numpy()).max())
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": out_diff < tol and w_diff < tol}
