# Modelled on the Keras example "Text classification with Transformer" (the same student): the
# Dense layers' kernels are (input_dim, units) and compute inputs @ kernel, so each block of
# torch's weights is taken as such a kernel: written in that style for this test corpus, not
# copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("query, key and value must all have embed_dim features")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().numpy().astype(np.float64)
    query_kernel = in_proj[:embed_dim]
    key_kernel = in_proj[embed_dim : 2 * embed_dim]
    value_kernel = in_proj[2 * embed_dim :]
    combine_kernel = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return query_kernel, key_kernel, value_kernel, combine_kernel


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    inputs = torch.as_tensor(X, dtype=dtype)
    # (batch_size, seq_len, embed_dim) or (seq_len, batch_size, embed_dim)
    inputs = inputs.unsqueeze(0) if mha.batch_first else inputs.unsqueeze(1)
    with torch.no_grad():
        output, weights = mha(inputs, inputs, inputs, average_attn_weights=False)
    output = (output[0] if mha.batch_first else output[:, 0]).double().numpy()
    weights = weights[0].double().numpy()
    my_output, my_weights = multi_head_attention(np.asarray(X, dtype=np.float64),
                                                 *weights_from_torch(mha), mha.num_heads)
    output_max_abs_diff = float(np.max(np.abs(output - my_output)))
    weights_max_abs_diff = float(np.max(np.abs(weights - my_weights)))
    tolerance = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": output_max_abs_diff <= tolerance and weights_max_abs_diff <= tolerance,
    }
