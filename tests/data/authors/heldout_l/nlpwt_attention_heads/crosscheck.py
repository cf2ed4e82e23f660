# Modelled on Tunstall, von Werra & Wolf, "Natural Language Processing with Transformers",
# chapters 2 and 3 (Hugging Face models are batch-first: `inputs.input_ids` of shape
# [batch_size, seq_len], `input_embeds = token_emb(inputs.input_ids)`, `torch.no_grad()`,
# `.size()`): written in that style for this test corpus, not copied.
"""Exercise 3: cross-check your multi-head attention against torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np
import torch

from multihead import multi_head_attention


def weights_from_torch(mha):
    if mha.in_proj_weight is None:
        raise ValueError("kdim and vdim must be equal to embed_dim")
    if mha.in_proj_bias is not None or mha.out_proj.bias is not None or mha.bias_k is not None:
        raise ValueError("the module must be built with bias=False and add_bias_kv=False")
    embed_dim = mha.embed_dim
    in_proj = mha.in_proj_weight.detach().double().numpy()
    Wq = in_proj[:embed_dim].T.copy()
    Wk = in_proj[embed_dim:2 * embed_dim].T.copy()
    Wv = in_proj[2 * embed_dim:].T.copy()
    Wo = mha.out_proj.weight.detach().double().numpy().T.copy()
    return Wq, Wk, Wv, Wo


def cross_check(mha, X):
    dtype = mha.in_proj_weight.dtype
    # [batch_size, seq_len, hidden_dim]
    input_embeds = torch.tensor(np.asarray(X), dtype=dtype).unsqueeze(0)
    with torch.no_grad():
        attn_output, attn_weights = mha(
            input_embeds, input_embeds, input_embeds, need_weights=True, average_attn_weights=False
        )
    attn_output = attn_output[0].double().numpy()
    attn_weights = attn_weights[0].double().numpy()

    out, weights = multi_head_attention(
        np.asarray(X, dtype=np.float64), *weights_from_torch(mha), mha.num_heads
    )
    output_diff = float(np.max(np.abs(attn_output - out)))
    weights_diff = float(np.max(np.abs(attn_weights - weights)))
    tol = 1e-4 if dtype == torch.float32 else 1e-9
    scale = max(1.0, float(np.max(np.abs(attn_output))))
    return {
        "output_max_abs_diff": output_diff,
        "weights_max_abs_diff": weights_diff,
        "match": bool(output_diff <= tol * scale and weights_diff <= tol),
    }
