# Modelled on huggingface/transformers, models/bloom/modeling_bloom.py (the same student): the
# fused query_key_value weight read in BLOOM's (num_heads, 3, head_dim) row layout, as _split_heads
# views it, then transposed for x @ W: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("a module with biases is not supported")
    hidden_size = mha.embed_dim
    num_heads = mha.num_heads
    head_dim = hidden_size // num_heads
    fused = mha.in_proj_weight.detach().to(torch.float64).numpy()
    # (3 * hidden, hidden) -> (num_heads, 3, head_dim, hidden)
    fused = fused.reshape(num_heads, 3, head_dim, hidden_size)
    Wq = fused[:, 0].reshape(hidden_size, hidden_size).T.copy()
    Wk = fused[:, 1].reshape(hidden_size, hidden_size).T.copy()
    Wv = fused[:, 2].reshape(hidden_size, hidden_size).T.copy()
    Wo = mha.out_proj.weight.detach().to(torch.float64).numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.from_numpy(np.array(X, dtype=np.float64)).to(dtype)
    if mha.batch_first:
        hidden_states = hidden_states.unsqueeze(0)
    else:
        hidden_states = hidden_states.unsqueeze(1)
    with torch.no_grad():
        output, attention_probs = mha(hidden_states, hidden_states, hidden_states,
                                      need_weights=True, average_attn_weights=False)
    output = (output[0] if mha.batch_first else output[:, 0]).to(torch.float64).numpy()
    attention_probs = attention_probs[0].to(torch.float64).numpy()

    my_output, my_probs = multi_head_attention(np.asarray(X, dtype=np.float64),
                                               *weights_from_torch(mha), mha.num_heads)
    output_max_abs_diff = float(np.abs(my_output - output).max())
    weights_max_abs_diff = float(np.abs(my_probs - attention_probs).max())
    tolerance = 1e-4 if dtype == torch.float32 else 1e-8
    return {
        "output_max_abs_diff": output_max_abs_diff,
        "weights_max_abs_diff": weights_max_abs_diff,
        "match": output_max_abs_diff <= tolerance and weights_max_abs_diff <= tolerance,
    }
