# Modelled on François Chollet, "Deep Learning with Python", 2nd edition, chapter 11 (the same
# student), with the weights of torch's layer read out one block at a time and checked the way
# the book checks a layer's output: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("the layer has separate query/key/value projections (kdim/vdim)")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("the layer has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("the layer has add_bias_kv")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().cpu().numpy().astype("float64")
    query_kernel = in_proj[0 * embed_dim:1 * embed_dim].T
    key_kernel = in_proj[1 * embed_dim:2 * embed_dim].T
    value_kernel = in_proj[2 * embed_dim:3 * embed_dim].T
    output_kernel = mha.out_proj.weight.detach().cpu().numpy().astype("float64").T
    return query_kernel, key_kernel, value_kernel, output_kernel


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    inputs = torch.tensor(X, dtype=dtype)
    inputs = inputs[None, :, :] if mha.batch_first else inputs[:, None, :]
    with torch.no_grad():
        torch_output, torch_scores = mha(inputs, inputs, inputs, need_weights=True,
                                         average_attn_weights=False)
    torch_output = torch_output[0] if mha.batch_first else torch_output[:, 0]
    torch_output = torch_output.numpy().astype("float64")
    torch_scores = torch_scores[0].numpy().astype("float64")

    output, scores = multi_head_attention(np.asarray(X, dtype="float64"),
                                          *weights_from_torch(mha), mha.num_heads)
    output_diff = float(np.max(np.abs(output - torch_output)))
    scores_diff = float(np.max(np.abs(scores - torch_scores)))
    tolerance = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": scores_diff,
        "match": output_diff < tolerance and scores_diff < tolerance,
    }
