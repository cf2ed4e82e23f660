# Modelled on huggingface/transformers, models/vit/modeling_vit.py (the same student): the
# forward pass of ViTSelfAttention written out again here on torch's weights, to check it
# step by step against the module: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import math

import numpy as np
import torch

from multihead import multi_head_attention, softmax  # noqa: F401


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("qkv_bias must be False")
    hidden_size = mha.embed_dim
    weight = mha.in_proj_weight.detach().to(torch.float64)
    query = weight[:hidden_size].T.numpy()
    key = weight[hidden_size:2 * hidden_size].T.numpy()
    value = weight[2 * hidden_size:].T.numpy()
    dense = mha.out_proj.weight.detach().to(torch.float64).T.numpy()
    return query, key, value, dense


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    dtype = mha.in_proj_weight.dtype
    hidden_states = torch.as_tensor(np.asarray(X), dtype=dtype)
    hidden_states = hidden_states[None] if mha.batch_first else hidden_states[:, None]
    with torch.no_grad():
        out, probs = mha(hidden_states, hidden_states, hidden_states,
                         need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).to(torch.float64).numpy()
    probs = probs[0].to(torch.float64).numpy()

    # ViTSelfAttention.forward, step by step
    query, key, value, dense = weights_from_torch(mha)
    X = np.asarray(X, dtype=np.float64)
    seq_len, hidden_size = X.shape
    num_attention_heads = mha.num_heads
    attention_head_size = int(hidden_size / num_attention_heads)
    all_head_size = num_attention_heads * attention_head_size

    def transpose_for_scores(x):
        x = x.reshape(seq_len, num_attention_heads, attention_head_size)
        return x.transpose(1, 0, 2)

    query_layer = transpose_for_scores(X @ query)
    key_layer = transpose_for_scores(X @ key)
    value_layer = transpose_for_scores(X @ value)
    attention_scores = query_layer @ key_layer.transpose(0, 2, 1)
    attention_scores = attention_scores / math.sqrt(attention_head_size)
    attention_probs = softmax(attention_scores, axis=-1)
    context_layer = attention_probs @ value_layer
    new_context_layer_shape = context_layer.shape[:-3] + (seq_len, all_head_size)
    context_layer = context_layer.reshape(new_context_layer_shape)
    my_out = context_layer @ dense

    out_diff = float(np.max(np.abs(my_out - out)))
    probs_diff = float(np.max(np.abs(attention_probs - probs)))
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": probs_diff,
            "match": bool(out_diff < tol and probs_diff < tol)}
