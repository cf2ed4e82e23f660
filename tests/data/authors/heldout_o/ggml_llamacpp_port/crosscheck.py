# Modelled on llama.cpp's convert_hf_to_gguf.py (LlamaModel.permute, applied to the q and k
# projection weights so that ggml's rope pairs neighbouring features:
# `weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:]).swapaxes(1,
# 2).reshape(weights.shape)`) and its tests comparing logits with an NMSE against the HF model:
# translated back to Python for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def permute(weights: np.ndarray, n_head: int) -> np.ndarray:
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2)
            .reshape(weights.shape))


def weights_from_torch(mha):
    if mha.in_proj_weight is None or mha.kdim != mha.embed_dim or mha.vdim != mha.embed_dim:
        raise ValueError("separate q/k/v projections are not supported")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("biases are not supported")
    n_embd = mha.embed_dim
    n_head = mha.num_heads
    data = mha.in_proj_weight.detach().cpu().to(torch.float64).numpy()
    wq = permute(data[:n_embd], n_head)
    wk = permute(data[n_embd:2 * n_embd], n_head)
    wv = data[2 * n_embd:]
    wo = mha.out_proj.weight.detach().cpu().to(torch.float64).numpy()
    # the exercise applies X @ W, so hand back (in, out)
    return wq.T.copy(), wk.T.copy(), wv.T.copy(), wo.T.copy()


def cross_check(mha, X):
    wq, wk, wv, wo = weights_from_torch(mha)
    out_np, kq_np = multi_head_attention(np.asarray(X, dtype=np.float64), wq, wk, wv, wo,
                                         mha.num_heads)
    dt = mha.in_proj_weight.dtype
    inp = torch.from_numpy(np.asarray(X)).to(dt)
    inp = inp.unsqueeze(0) if mha.batch_first else inp.unsqueeze(1)
    with torch.no_grad():
        out_t, kq_t = mha(inp, inp, inp, need_weights=True, average_attn_weights=False)
    out_t = (out_t.squeeze(0) if mha.batch_first else out_t.squeeze(1)).to(torch.float64).numpy()
    kq_t = kq_t.squeeze(0).to(torch.float64).numpy()
    d_out = float(np.max(np.abs(out_t - out_np)))
    d_kq = float(np.max(np.abs(kq_t - kq_np)))
    eps = 1e-4 if dt == torch.float32 else 1e-10
    size = max(1.0, float(np.max(np.abs(out_t))))
    return {"output_max_abs_diff": d_out, "weights_max_abs_diff": d_kq,
            "match": d_out <= eps * size and d_kq <= eps}
