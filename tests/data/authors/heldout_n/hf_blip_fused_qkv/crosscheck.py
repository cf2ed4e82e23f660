# Modelled on huggingface/transformers (BlipAttention's fused `qkv` Linear, the conversion
# scripts' `state_dict` slicing of `in_proj_weight` with `[:dim]`, `[dim:2*dim]`, `[-dim:]`, and
# the model tests' `torch.allclose(..., atol=1e-4)`): written in that style for this test corpus,
# not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim and vdim must be equal to embed_dim")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("bias=True is not supported")
    state_dict = {k: v.detach().to(torch.float64) for k, v in mha.state_dict().items()}
    in_proj_weight = state_dict["in_proj_weight"]
    dim = mha.embed_dim
    q = in_proj_weight[:dim, :]
    k = in_proj_weight[dim : dim * 2, :]
    v = in_proj_weight[-dim:, :]
    o = state_dict["out_proj.weight"]
    return tuple(w.T.contiguous().numpy() for w in (q, k, v, o))


def cross_check(mha, X):
    hidden_states = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        outputs = mha(
            hidden_states, hidden_states, hidden_states,
            need_weights=True, average_attn_weights=False,
        )
    expected_output = outputs[0][0] if mha.batch_first else outputs[0][:, 0]
    expected_attentions = outputs[1][0]
    output, attentions = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    output = torch.from_numpy(np.asarray(output)).to(expected_output.dtype)
    attentions = torch.from_numpy(np.asarray(attentions)).to(expected_attentions.dtype)
    out_diff = (expected_output - output).abs().max().item()
    attn_diff = (expected_attentions - attentions).abs().max().item()
    return {
        "output_max_abs_diff": float(out_diff),
        "weights_max_abs_diff": float(attn_diff),
        "match": bool(
            torch.allclose(expected_output, output, atol=1e-4)
            and torch.allclose(expected_attentions, attentions, atol=1e-4)
        ),
    }
