# Modelled on CompVis/stable-diffusion, `ldm/modules/attention.py` (`_ATTN_PRECISION = "fp32"`:
# `with torch.autocast(enabled=False, device_type='cuda'): q, k = q.float(), k.float()`,
# `sim = einsum('b i d, b j d -> b i j', q, k) * self.scale`) and `scripts/txt2img.py`'s habit of
# `.float()` on weights: written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch
from torch import einsum

from multihead import multi_head_attention  # noqa: F401


def weights_from_torch(mha):
    if not mha._qkv_same_embed_dim:
        raise ValueError("context_dim must equal query_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("to_q/to_k/to_v/to_out must be bias-free here")
    w = mha.in_proj_weight.detach().float()
    d = mha.embed_dim
    to_q, to_k, to_v = w[:d], w[d:2 * d], w[2 * d:]
    to_out = mha.out_proj.weight.detach().float()
    return tuple(t.T.numpy().astype(np.float64) for t in (to_q, to_k, to_v, to_out))


def cross_check(mha, X):
    h = mha.num_heads
    Wq, Wk, Wv, Wo = (torch.from_numpy(w).float() for w in weights_from_torch(mha))
    x = torch.as_tensor(np.asarray(X)).to(mha.in_proj_weight.dtype)
    xb = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        ref, ref_attn = mha(xb, xb, xb, need_weights=True, average_attn_weights=False)
    ref = (ref[0] if mha.batch_first else ref[:, 0]).float()
    ref_attn = ref_attn[0].float()

    # CrossAttention.forward, in fp32 as _ATTN_PRECISION says
    with torch.no_grad():
        xf = x.float()
        q, k, v = xf @ Wq, xf @ Wk, xf @ Wv
        n, d = q.shape
        q, k, v = (t.reshape(n, h, d // h).transpose(0, 1) for t in (q, k, v))
        sim = einsum('b i d, b j d -> b i j', q, k) * (d // h) ** -0.5
        attn = sim.softmax(dim=-1)
        out = einsum('b i j, b j d -> b i d', attn, v)
        out = out.transpose(0, 1).reshape(n, d) @ Wo

    out_diff = (out - ref).abs().max().item()
    attn_diff = (attn - ref_attn).abs().max().item()
    scale = max(1.0, ref.abs().max().item())
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": out_diff <= 1e-4 * scale and attn_diff <= 1e-4,
    }
