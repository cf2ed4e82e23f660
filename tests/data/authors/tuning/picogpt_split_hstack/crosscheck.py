# Modelled on jaymody/picoGPT (utils.py loading GPT-2 weights into plain NumPy arrays, c_attn
# as one [n_embd, 3*n_embd] matrix split with np.split): written in that style, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    c_attn = mha.in_proj_weight.detach().numpy().T.astype(np.float64)  # [n_embd, 3*n_embd]
    Wq, Wk, Wv = np.split(c_attn, 3, axis=-1)
    c_proj = mha.out_proj.weight.detach().numpy().T.astype(np.float64)
    return Wq, Wk, Wv, c_proj


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    x = torch.from_numpy(np.asarray(X)).to(dtype)
    x = x[None] if mha.batch_first else x[:, None]
    with torch.no_grad():
        out, att = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = (out[0] if mha.batch_first else out[:, 0]).double().numpy()
    att = att[0].double().numpy()
    my_out, my_att = multi_head_attention(np.asarray(X, dtype=np.float64),
                                          *weights_from_torch(mha), mha.num_heads)
    o = float(np.abs(my_out - out).max())
    w = float(np.abs(my_att - att).max())
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": o, "weights_max_abs_diff": w, "match": o <= tol and w <= tol}
