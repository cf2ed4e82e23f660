# Modelled on google-research/bert (the same student): the float32 everywhere of modeling.py
# (tf.cast(..., tf.float32)) and the kernel transposes of the TF -> PyTorch checkpoint
# conversion: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("from_tensor and to_tensor widths must both be hidden_size")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("dense layers must have no bias")
    hidden_size = mha.embed_dim
    weight = mha.in_proj_weight.detach().cpu().numpy().astype(np.float64)
    # PyTorch Linear weights are [out, in]; TF kernels are [in, out]: transpose.
    query_kernel = np.transpose(weight[0:hidden_size])
    key_kernel = np.transpose(weight[hidden_size:2 * hidden_size])
    value_kernel = np.transpose(weight[2 * hidden_size:3 * hidden_size])
    output_kernel = np.transpose(mha.out_proj.weight.detach().cpu().numpy().astype(np.float64))
    return query_kernel, key_kernel, value_kernel, output_kernel


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    input_tensor = torch.tensor(np.asarray(X, dtype=np.float32))
    if mha.batch_first:
        input_tensor = input_tensor.unsqueeze(0)  # [batch_size, seq_length, hidden_size]
    else:
        input_tensor = input_tensor.unsqueeze(1)  # [seq_length, batch_size, hidden_size]
    with torch.no_grad():
        output, probs = mha(input_tensor, input_tensor, input_tensor,
                            need_weights=True, average_attn_weights=False)
    output = output[0] if mha.batch_first else output[:, 0]
    expected_output = output.numpy().astype(np.float64)
    expected_probs = probs[0].numpy().astype(np.float64)

    actual_output, actual_probs = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads)
    output_max_abs_diff = float(np.max(np.abs(actual_output - expected_output)))
    weights_max_abs_diff = float(np.max(np.abs(actual_probs - expected_probs)))
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": output_max_abs_diff < 1e-4 and weights_max_abs_diff < 1e-4,
    }
