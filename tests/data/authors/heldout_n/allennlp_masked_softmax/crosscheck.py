# Modelled on allenai/allennlp (a module is always run with the padding mask of its text field,
# `get_text_field_mask`, here torch's `key_padding_mask`; the tests' `assert_almost_equal`
# with `decimal`): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.bias_k is not None or mha.out_proj.bias is not None:
        raise ValueError("the module has biases")
    in_proj = mha.in_proj_weight.detach().double().numpy()
    query_w, key_w, value_w = np.split(in_proj, 3, axis=0)
    out_w = mha.out_proj.weight.detach().double().numpy()
    return query_w.T.copy(), key_w.T.copy(), value_w.T.copy(), out_w.T.copy()


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    inputs = torch.as_tensor(X, dtype=dtype).unsqueeze(0)  # (batch_size, timesteps, input_dim)
    mask = inputs.ne(0).any(dim=-1)  # get_text_field_mask
    if not mha.batch_first:
        inputs = inputs.transpose(0, 1)
    with torch.no_grad():
        output, attn = mha(
            inputs, inputs, inputs,
            key_padding_mask=~mask,
            need_weights=True,
            average_attn_weights=False,
        )
    if not mha.batch_first:
        output = output.transpose(0, 1)
    output = output[0].double().numpy()
    attn = attn[0].double().numpy()
    ours, our_attn = multi_head_attention(X, *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.abs(output - ours).max())
    weights_diff = float(np.abs(attn - our_attn).max())
    decimal = 4 if dtype == torch.float32 else 8
    tolerance = 10.0 ** -decimal * max(1.0, float(np.abs(output).max()))
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": output_diff <= tolerance and weights_diff <= tolerance,
    }
