# Modelled on the TensorFlow/Keras habit of reading layer.get_weights() as (in, out) kernels that
# are used as x @ kernel: written in that style for this test corpus, not copied. The student
# takes torch's weights the Keras way, without transposing them.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha: torch.nn.MultiheadAttention):
    if mha.in_proj_weight is None:
        raise ValueError("kdim/vdim must equal embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("use_bias must be False")
    d_model = mha.embed_dim
    kernel = mha.in_proj_weight.detach().numpy().astype(np.float64)
    wq = kernel[:d_model]
    wk = kernel[d_model : 2 * d_model]
    wv = kernel[2 * d_model :]
    dense = mha.out_proj.weight.detach().numpy().astype(np.float64)
    return wq, wk, wv, dense


def cross_check(mha: torch.nn.MultiheadAttention, X: np.ndarray) -> dict:
    inp = torch.tensor(X, dtype=mha.in_proj_weight.dtype)
    inp = inp.unsqueeze(0) if mha.batch_first else inp.unsqueeze(1)
    with torch.no_grad():
        ref_out, ref_w = mha(inp, inp, inp, need_weights=True, average_attn_weights=False)
    ref_out = (ref_out[0] if mha.batch_first else ref_out[:, 0]).double().numpy()
    ref_w = ref_w[0].double().numpy()
    out, w = multi_head_attention(np.asarray(X, dtype=np.float64), *weights_from_torch(mha),
                                  mha.num_heads)
    out_diff = float(np.max(np.abs(out - ref_out)))
    w_diff = float(np.max(np.abs(w - ref_w)))
    tol = 1e-4 if mha.in_proj_weight.dtype == torch.float32 else 1e-8
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff < tol and w_diff < tol)}
