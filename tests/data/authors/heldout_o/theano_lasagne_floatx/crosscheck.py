# Modelled on Theano-era attention code (parameters kept as `theano.shared(np.asarray(w,
# dtype=theano.config.floatX))` with floatX = 'float32', Lasagne's `set_all_param_values` when
# loading weights from another framework): written in that style for this test corpus, not
# copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import floatX, multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None or not mha._qkv_same_embed_dim:
        raise ValueError("separate q/k/v projections (kdim/vdim) are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("only modules without biases are supported")
    d = mha.embed_dim
    W_in = mha.in_proj_weight.detach().cpu().numpy()
    W_out = mha.out_proj.weight.detach().cpu().numpy()
    # shared variables hold floatX; the exercise wants float64 back out
    params = [np.asarray(W_in[:d].T, dtype=floatX),
              np.asarray(W_in[d:2 * d].T, dtype=floatX),
              np.asarray(W_in[2 * d:].T, dtype=floatX),
              np.asarray(W_out.T, dtype=floatX)]
    return tuple(p.astype("float64") for p in params)


def cross_check(mha, X):
    Wq, Wk, Wv, Wo = weights_from_torch(mha)
    mine, mine_w = multi_head_attention(np.asarray(X, dtype="float64"), Wq, Wk, Wv, Wo,
                                        mha.num_heads)
    dtype = mha.in_proj_weight.dtype
    x = torch.as_tensor(np.asarray(X), dtype=dtype)
    x = x.unsqueeze(0) if mha.batch_first else x.unsqueeze(1)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    out = out[0] if mha.batch_first else out[:, 0]
    out = out.double().numpy()
    w = w[0].double().numpy()
    out_diff = float(np.max(np.abs(out - mine)))
    w_diff = float(np.max(np.abs(w - mine_w)))
    scale = max(1.0, float(np.max(np.abs(out))))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    return {"output_max_abs_diff": out_diff, "weights_max_abs_diff": w_diff,
            "match": bool(out_diff <= tol * scale and w_diff <= tol)}
