# Modelled on TransformerLens's weight conversion (loading_from_pretrained's convert_*_weights:
# einops.rearrange of the HF projection into W_Q[head_index, d_model, d_head], cast with
# .double()) and its tests comparing against the HF model with a dtype-dependent atol: written
# in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("separate q/k/v weights (kdim or vdim set) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None:
        raise ValueError("the module has biases")
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("the module has add_bias_kv")
    d_model = mha.embed_dim
    # in_proj_weight: [(qkv d_model_out), d_model_in] -> qkv d_model_in d_model_out
    W = mha.in_proj_weight.detach().double().reshape(3, d_model, d_model).transpose(1, 2)
    W_O = mha.out_proj.weight.detach().double().T
    return W[0].numpy().copy(), W[1].numpy().copy(), W[2].numpy().copy(), W_O.numpy().copy()


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    batch_dim = 0 if mha.batch_first else 1
    x = x.unsqueeze(batch_dim)
    with torch.inference_mode():
        hf_out, hf_pattern = mha(x, x, x, need_weights=True, average_attn_weights=False)
    hf_out = hf_out.select(batch_dim, 0).double().numpy()
    hf_pattern = hf_pattern[0].double().numpy()

    out, pattern = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                        mha.num_heads)
    out_diff = float(np.abs(out - hf_out).max())
    pattern_diff = float(np.abs(pattern - hf_pattern).max())
    atol = 1e-4 if dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": pattern_diff,
            "match": out_diff <= atol and pattern_diff <= atol}
