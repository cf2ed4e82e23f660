# Modelled on NVIDIA/NeMo's ASR modules and their tests: (B, T, D) batch-first tensors
# throughout, `torch.inference_mode()`, `(a - b).abs().max()` kept as tensors and compared with
# `torch.allclose`/`<=` (as in `tests/collections/asr/test_asr_modules.py`): written in that
# style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal n_feat")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    n_feat = mha.embed_dim
    w = mha.in_proj_weight.detach().to(torch.float64)
    linear_q, linear_k, linear_v = torch.split(w, n_feat, dim=0)
    linear_out = mha.out_proj.weight.detach().to(torch.float64)
    return (linear_q.T.numpy().copy(), linear_k.T.numpy().copy(),
            linear_v.T.numpy().copy(), linear_out.T.numpy().copy())


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.inference_mode():
        ref_out, ref_attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    ref_out = ref_out.squeeze(0) if mha.batch_first else ref_out.squeeze(1)
    ref_attn = ref_attn.squeeze(0)

    out, attn = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                     mha.num_heads)
    out = torch.from_numpy(out)
    attn = torch.from_numpy(attn)
    out_diff = (out - ref_out.double()).abs().max()
    attn_diff = (attn - ref_attn.double()).abs().max()
    tol = 1e-4 if dtype == torch.float32 else 1e-8
    scale = max(1.0, ref_out.abs().max().item())
    return {
        "output_max_abs_diff": out_diff,
        "weights_max_abs_diff": attn_diff,
        "match": bool(out_diff <= tol * scale and attn_diff <= tol),
    }
