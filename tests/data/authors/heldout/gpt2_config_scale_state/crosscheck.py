# Modelled on huggingface/transformers' weight-conversion scripts (state_dict tensors detached,
# transposed and cast): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if not mha._qkv_same_embed_dim:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    c_attn = mha.in_proj_weight.detach().to(torch.float64).T.numpy()  # (embed, 3 * embed)
    e = mha.embed_dim
    c_proj = mha.out_proj.weight.detach().to(torch.float64).T.numpy()
    return c_attn[:, :e].copy(), c_attn[:, e : 2 * e].copy(), c_attn[:, 2 * e :].copy(), c_proj


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    hidden = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    hidden = hidden.unsqueeze(0) if mha.batch_first else hidden.unsqueeze(1)
    with torch.no_grad():
        ref, ref_w = mha(hidden, hidden, hidden, need_weights=True, average_attn_weights=False)
    ref = (ref[0] if mha.batch_first else ref[:, 0]).double().numpy()
    ref_w = ref_w[0].double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    od = float(np.abs(out - ref).max())
    wd = float(np.abs(w - ref_w).max()) if w.shape == ref_w.shape else float("inf")
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": od, "weights_max_abs_diff": wd, "match": od < tol and wd < tol}
